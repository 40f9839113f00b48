"""What the register tells the gates without importing them (bans never imports entry).

Entry registers its callbacks in EntryConfig.ready(): flagging tickets when a ban comes into
force, clearing the open flags of a revoked ban, and counting the flags awaiting a reviewer.
Casework registers where a ban's grounds come from (the case and its log entries), so the
register shows them as links and not as free text only.
Retention, legal holds and subject access are not here: safeground.privacy, above every app
whose data it governs, calls each app's part by name.
Each registration point holds one callback per purpose; registering the same one again is a no-op.
"""

from collections.abc import Callable
from datetime import datetime
from typing import Any

from .models import Ban

BanInForce = Callable[[Ban], int]  # -> tickets newly flagged
BanRevoked = Callable[[Ban, Any, datetime], None]  # (ban, by, at)
FlagsAwaiting = Callable[[Any], int]  # (user) -> open flags they may review
# (ban ids) -> ban id -> the records its grounds rest on, each (what it is, its page's URL)
GroundsSources = Callable[[list[int]], dict[int, list[tuple[str, str]]]]
BanChanged = Callable[[Ban], None]  # a ban's status changed (inside its transaction)

_in_force: list[BanInForce] = []
_revoked: list[BanRevoked] = []
_awaiting: list[FlagsAwaiting] = []
_sources: list[GroundsSources] = []
_changed: list[BanChanged] = []


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


def on_ban_changed(callback: BanChanged) -> BanChanged:
    """The league's exchange publishes again when a ban starts, ends, is appealed or decided."""
    return _add(_changed, callback)


def ban_changed(ban: Ban) -> None:
    for callback in _changed:
        callback(ban)


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
