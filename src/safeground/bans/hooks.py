"""What the register tells the gates without importing them (bans never imports entry).

Entry registers its callbacks in EntryConfig.ready(): flagging tickets when a ban comes into
force, clearing the open flags of a revoked ban, and counting the flags awaiting a reviewer.
Casework registers where a ban's grounds come from (the case and its log entries), so the
register shows them as links and not as free text only.
Retention runs in the register's daily job: entry (ticket holders), the log (photos) and
deployment (check photos) register their own erasure steps, and casework registers its legal
holds (what an open case names), which every step, the register's own included, leaves alone.
A subject-access export gathers what each app holds about a person from registered sections.
Each registration point holds one callback per purpose; registering the same one again is a no-op.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from .models import Ban

BanInForce = Callable[[Ban], int]  # -> tickets newly flagged
BanRevoked = Callable[[Ban, Any, datetime], None]  # (ban, by, at)
FlagsAwaiting = Callable[[Any], int]  # (user) -> open flags they may review
# (ban ids) -> ban id -> the records its grounds rest on, each (what it is, its page's URL)
GroundsSources = Callable[[list[int]], dict[int, list[tuple[str, str]]]]


@dataclass(frozen=True)
class Holds:
    """What open cases name, by kind: kept past retention while the case is open."""

    people: frozenset[int] = field(default_factory=frozenset)
    tickets: frozenset[int] = field(default_factory=frozenset)
    log_photos: frozenset[int] = field(default_factory=frozenset)


@dataclass(frozen=True)
class Erased:
    """One retention step's counts: what it erases, how many, how many held by an open case.
    `after` and `held_by` word the command's line for a step counted otherwise (evidence)."""

    what: str
    days: int
    erased: int
    held: int
    after: str = "after the match"
    held_by: str = "by an open case"


LegalHolds = Callable[[], Holds]
RetentionStep = Callable[[date, Holds], Erased]  # (today, holds)
# (person) -> named sections of their subject-access export
SubjectAccess = Callable[[Any], dict[str, Any]]

_in_force: list[BanInForce] = []
_revoked: list[BanRevoked] = []
_awaiting: list[FlagsAwaiting] = []
_sources: list[GroundsSources] = []
_holds: list[LegalHolds] = []
_retention: list[RetentionStep] = []
_subject_access: list[SubjectAccess] = []


def _add[T](callbacks: list[T], callback: T) -> T:
    if callback not in callbacks:
        callbacks.append(callback)
    return callback


def on_ban_in_force(callback: BanInForce) -> BanInForce:
    return _add(_in_force, callback)


def on_ban_revoked(callback: BanRevoked) -> BanRevoked:
    return _add(_revoked, callback)


def on_flags_awaiting(callback: FlagsAwaiting) -> FlagsAwaiting:
    return _add(_awaiting, callback)


def on_grounds_sources(callback: GroundsSources) -> GroundsSources:
    return _add(_sources, callback)


def on_legal_holds(callback: LegalHolds) -> LegalHolds:
    return _add(_holds, callback)


def on_retention(callback: RetentionStep) -> RetentionStep:
    return _add(_retention, callback)


def on_subject_access(callback: SubjectAccess) -> SubjectAccess:
    return _add(_subject_access, callback)


def legal_holds() -> Holds:
    """Everything every open case names."""
    people: set[int] = set()
    tickets: set[int] = set()
    photos: set[int] = set()
    for callback in _holds:
        held = callback()
        people |= held.people
        tickets |= held.tickets
        photos |= held.log_photos
    return Holds(frozenset(people), frozenset(tickets), frozenset(photos))


def retention_steps(today: date, holds: Holds) -> list[Erased]:
    """Every registered retention step, run inside the register's retention transaction."""
    return [callback(today, holds) for callback in _retention]


def subject_access(person: Any) -> dict[str, Any]:
    """The other apps' sections of a person's subject-access export."""
    found: dict[str, Any] = {}
    for callback in _subject_access:
        found |= callback(person)
    return found


def ban_in_force(ban: Ban) -> int:
    """A ban has just come into force (inside its transaction): the tickets it flagged."""
    return sum(callback(ban) for callback in _in_force)


def ban_revoked(ban: Ban, by: Any, at: datetime) -> None:
    """A ban revoked on appeal (inside its transaction)."""
    for callback in _revoked:
        callback(ban, by, at)


def flags_awaiting(user: Any) -> int:
    """Flagged tickets awaiting this user's review."""
    return sum(callback(user) for callback in _awaiting)


def grounds_sources(ban_ids: list[int]) -> dict[int, list[tuple[str, str]]]:
    """For each ban, the records its grounds rest on (a case and its log entries), as links."""
    found: dict[int, list[tuple[str, str]]] = {}
    for callback in _sources:
        for ban_id, sources in callback(ban_ids).items():
            found.setdefault(ban_id, []).extend(sources)
    return found
