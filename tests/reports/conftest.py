"""A cup tie played through the real services: tickets scanned at the gates (admitted and
denied), reports in the log (arrests, an ejection, a home-only one, one outside), an incident
assigned, escalated and resolved, a broadcast acknowledged, the safety officer's debrief and a
ban proposed afterwards. Tests compute every expected figure from what this made."""

from dataclasses import dataclass, field
from datetime import timedelta

import pytest

from safeground.bans.models import Ban
from safeground.entry.models import Scan
from safeground.entry.runtime import lookups
from safeground.entry.scans import ScanResult
from safeground.incidents.broadcasting import broadcast_ack, broadcast_send
from safeground.incidents.models import LogEntry
from safeground.incidents.posts import steward_post_assign
from safeground.incidents.services import (
    Place,
    log_entry_assign,
    log_entry_escalate,
    log_entry_set_status,
)
from tests import factories


@pytest.fixture(autouse=True)
def _fresh_caches():
    """The gates' caches (turnstiles, matches by id) start and end each test empty, as in
    tests/entry: ids are reused from one test's database to the next."""
    lookups.caches_clear()
    yield
    lookups.caches_clear()


@dataclass
class Played:
    day: factories.MatchDay
    # (minutes from kick-off, barcode, what the turnstile answered)
    scans: list[tuple[float, str, ScanResult]] = field(default_factory=list)
    bans: list[Ban] = field(default_factory=list)
    debrief: LogEntry | None = None  # the safety officer's, after full time (not an incident)
    reports: list[LogEntry] = field(default_factory=list)
    # (minutes to assignment, to escalation, to resolution) of the incident acted on
    acted: tuple[float, float, float] = (0.0, 0.0, 0.0)

    @property
    def cup(self):  # type: ignore[no-untyped-def]
        return self.day.cup_tie

    @property
    def incidents(self) -> list[LogEntry]:
        """The season's incidents among the reports: not its arrests and ejections, which it
        counts apart."""
        return [e for e in self.reports if e.category.code not in ("arrest", "ejection")]


def _at(fixture, minutes: float):  # type: ignore[no-untyped-def]
    return fixture.kickoff + timedelta(minutes=minutes)


@pytest.fixture
def played(match_day) -> Played:
    cup, cast = match_day.cup_tie, match_day.cast
    played = Played(day=match_day)
    factories.tickets(cup, 6, block="S-L2", prefix="AWAY")
    factories.tickets(cup, 4, block="N-L1", prefix="HOME")
    flagged = factories.ticket(cup, block="N-L2", barcode="FLAGGED-1")
    flag = factories.flag(flagged)  # on a new ban of the club, made (in the test) after the match

    def scan(barcode: str, turnstile: str, minutes: float) -> None:
        result = factories.scan(cup, barcode, turnstile=turnstile, minutes=minutes)
        played.scans.append((minutes, barcode, result))

    for n in range(6):  # the away end arrives through gate F, spread over the hour before
        scan(f"AWAY-{n:05d}", "F01", -60 + 9 * n)
    for n in range(4):  # the home end too, one of them after half time
        scan(f"HOME-{n:05d}", "A01", -20 + 22 * n)
    scan("AWAY-00000", "F02", -5)  # already inside
    scan("FORGED-1", "A02", -4)  # unknown ticket
    scan("FLAGGED-1", "A02", -3)  # flagged: check identity
    scan("HOME-00003", "F03", 70)  # a home ticket at the away gate

    loggist, police = cast["loggist"], cast["police"]

    def report(category: str, minutes: float, place: Place, **fields) -> LogEntry:  # type: ignore[no-untyped-def]
        entry = factories.report(
            cup,
            category=category,
            place=place,
            observed_at=_at(cup, minutes),
            author=fields.pop("author", loggist),
            text=fields.pop("text", f"{category} at {minutes}"),
            **fields,
        )
        played.reports.append(entry)
        return entry

    coins = report("missile", 11, Place(block="S-L2"), severity=3)  # acted on below
    report("missile", 15, Place(block="S-L2"), severity=4)
    report("missile", 18, Place(block="S-L3"), severity=3)
    report("segregation-breach", 27, Place(block="S-L3"), severity=5)
    report("pyrotechnic", 50, Place(concourse="S-L"), severity=3)
    report("arrest", 98, Place(concourse="S-L"), author=police)
    report("arrest", 101, Place(outside="Station approach"), author=police)
    report("ejection", 70, Place(block="S-L1"))
    report("alcohol", -40, Place(outside="Coach park"), home_only=True)
    reported, assigned, escalated, resolved = 11, 13, 14.5, 31
    log_entry_assign(
        entry=coins, author=loggist, assignee=cast["supervisor"], observed_at=_at(cup, assigned)
    )
    log_entry_escalate(entry=coins, author=loggist, to="police", observed_at=_at(cup, escalated))
    log_entry_set_status(
        entry=coins, author=police, status="resolved", observed_at=_at(cup, resolved)
    )
    played.acted = (assigned - reported, escalated - reported, resolved - reported)
    played.debrief = factories.report(
        cup,
        category="decision",
        place=Place(outside="Control room"),
        observed_at=_at(cup, 125),
        author=cast["safety"],
        text="Debrief: the steward line at the buffer held; more stewards there next time",
    )
    steward_post_assign(
        fixture=cup, steward=cast["steward"], assigned_by=cast["safety"], zone="away-south-cup"
    )
    broadcast = broadcast_send(fixture=cup, sent_by=cast["safety"], script="hold")
    broadcast_ack(broadcast=broadcast, user=cast["steward"])
    played.bans += [flag.ban, factories.ban(cast.home, status="proposed")]
    return played


def denied_by_reason(scans: list[tuple[float, str, ScanResult]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for _minutes, _barcode, result in scans:
        if result.decision == Scan.Decision.DENY:
            counts[result.reason or ""] = counts.get(result.reason or "", 0) + 1
    return counts
