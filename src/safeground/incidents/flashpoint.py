"""Flashpoint warnings: trouble building in a zone, seen before it blows up.

Each zone of the match is scored over a sliding window: every report counts its severity, halved
every `half_life_minutes`, in full in its own zones and by `neighbour_share` in the zones that
touch them (block adjacency). A zone whose score reaches `threshold`, or whose reports in the
last `rate_minutes` number at least `rate_count` and twice those of the minutes before, gets a
warning entry in the log naming the entries that caused it; then not again for that zone for
`cooldown_minutes`. All the numbers are settings (SAFEGROUND_FLASHPOINT).
"""

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.utils.translation import gettext, gettext_noop

from safeground.matches.models import Fixture
from safeground.venues.models import BlockAdjacency

from . import places
from .models import LogEntry
from .selectors import zone_map

DEFAULTS: dict[str, float] = {
    "window_minutes": 30,
    "half_life_minutes": 10,
    "threshold": 12.0,
    "neighbour_share": 0.5,
    "rate_minutes": 5,
    "rate_count": 4,
    "cooldown_minutes": 15,
    "warning_severity": 4,
}


def flashpoint_settings() -> dict[str, float]:
    return DEFAULTS | getattr(settings, "SAFEGROUND_FLASHPOINT", {})


@dataclass(frozen=True)
class ZoneScore:
    zone_id: int
    zone_name: str
    score: float
    recent: int  # reports in the zone in the last rate_minutes
    before: int  # in the rate_minutes before those
    causes: list[int]  # seqs of the reports that count, strongest first


def zone_neighbours(fixture: Fixture) -> dict[int, set[int]]:
    """For each of the fixture's zones, the fixture zones that touch it (kept on the fixture, and
    a few seconds in the process: places.py)."""
    cached: dict[int, set[int]] | None = getattr(fixture, "_zone_neighbours", None)
    if cached is None:
        cached = places.zone_neighbours.get(fixture.pk, lambda: _zone_neighbours_read(fixture))
        fixture._zone_neighbours = cached  # type: ignore[attr-defined]
    return cached


def _zone_neighbours_read(fixture: Fixture) -> dict[int, set[int]]:
    zones = zone_map(fixture)
    neighbours: dict[int, set[int]] = {z: set() for z in zones.names}
    for a, b in BlockAdjacency.objects.filter(ground=fixture.ground_id).values_list(
        "block_id", "neighbour_id"
    ):
        for za in zones.blocks.get(a, ()):
            for zb in zones.blocks.get(b, ()):
                if za != zb:
                    neighbours[za].add(zb)
                    neighbours[zb].add(za)
    return neighbours


@dataclass(frozen=True)
class WindowReport:
    seq: int
    severity: int
    observed_at: datetime
    zone_ids: frozenset[int]


PLACE_FIELDS = ("severity", "block_id", "zone_id", "gate_id", "concourse_id")


def window_reports(fixture: Fixture, start: datetime, end: datetime) -> list[WindowReport]:
    """The reports observed in [start, end] with their severity and zones, corrections applied.

    Plain rows, not log entries: this runs after every report, so it stays a few cheap queries
    whatever the size of the log."""
    zones = zone_map(fixture)
    reports = {
        row["id"]: row
        for row in LogEntry.objects.filter(
            fixture=fixture, kind=LogEntry.Kind.REPORT, observed_at__range=(start, end)
        ).values("id", "seq", "observed_at", *PLACE_FIELDS)
    }
    # The corrections of those reports by a join, not an IN list of every report in the window.
    for fix in (
        LogEntry.objects.filter(
            fixture=fixture,
            kind=LogEntry.Kind.CORRECTION,
            concerns__kind=LogEntry.Kind.REPORT,
            concerns__observed_at__range=(start, end),
        )
        .order_by("seq")
        .values("concerns_id", *PLACE_FIELDS)
    ):
        report = reports[fix["concerns_id"]]
        if fix["severity"]:
            report["severity"] = fix["severity"]
        if any(fix[f] for f in PLACE_FIELDS[1:]):  # a corrected place replaces the old one
            report.update({f: fix[f] for f in PLACE_FIELDS[1:]})
    return [
        WindowReport(
            seq=row["seq"],
            severity=row["severity"] or 0,
            observed_at=row["observed_at"],
            zone_ids=frozenset(
                zones.zone_ids(
                    block_id=row["block_id"],
                    zone_id=row["zone_id"],
                    gate_id=row["gate_id"],
                    concourse_id=row["concourse_id"],
                )
            ),
        )
        for row in reports.values()
    ]


def zone_scores(fixture: Fixture, at: datetime) -> list[ZoneScore]:
    conf = flashpoint_settings()
    window = timedelta(minutes=conf["window_minutes"])
    rate = timedelta(minutes=conf["rate_minutes"])
    neighbours = zone_neighbours(fixture)
    names = zone_map(fixture).names
    scores: dict[int, float] = dict.fromkeys(neighbours, 0.0)
    causes: dict[int, list[tuple[float, int]]] = {z: [] for z in neighbours}
    recent: dict[int, int] = dict.fromkeys(neighbours, 0)
    before: dict[int, int] = dict.fromkeys(neighbours, 0)
    for incident in window_reports(fixture, at - window, at):
        if not incident.severity:
            continue
        age = at - incident.observed_at
        if age < timedelta(0) or age > window:
            continue
        weight = incident.severity * 0.5 ** (age / timedelta(minutes=conf["half_life_minutes"]))
        touched: dict[int, float] = {}
        for zone_id in incident.zone_ids:
            if zone_id in scores:
                touched[zone_id] = weight
                if age <= rate:
                    recent[zone_id] += 1
                elif age <= 2 * rate:
                    before[zone_id] += 1
        for zone_id in list(touched):
            for neighbour in neighbours.get(zone_id, ()):
                share = weight * conf["neighbour_share"]
                touched[neighbour] = max(touched.get(neighbour, 0.0), share)
        for zone_id, value in touched.items():
            scores[zone_id] += value
            causes[zone_id].append((value, incident.seq))
    return [
        ZoneScore(
            zone_id=z,
            zone_name=names.get(z, str(z)),
            score=round(scores[z], 2),
            recent=recent[z],
            before=before[z],
            causes=[seq for _, seq in sorted(causes[z], reverse=True)],
        )
        for z in scores
    ]


# A warning's words. The log keeps them in English, the source language (said here without a
# translation's cost: the scoring runs after every report); a reader's screen or phone says them
# again in its language (flashpoint_text_in_language).
BUILDING = gettext_noop("Flashpoint building in %(zone)s: %(reason)s. Entries: %(entries)s.")
SCORE_REACHED = gettext_noop("score %(score)s reached the threshold %(threshold)s")
RATE_UP = gettext_noop(
    "%(recent)s reports in %(minutes)s min, up from %(before)s in the minutes before"
)


def zone_building(zone: ZoneScore, conf: dict[str, float]) -> str:
    """Why the zone warrants a warning, or '' when it does not."""
    if zone.score >= conf["threshold"]:
        return SCORE_REACHED % {"score": f"{zone.score:g}", "threshold": f"{conf['threshold']:g}"}
    if zone.recent >= conf["rate_count"] and zone.recent >= 2 * max(zone.before, 1):
        return RATE_UP % {
            "recent": zone.recent,
            "minutes": f"{conf['rate_minutes']:g}",
            "before": zone.before,
        }
    return ""


def _pattern(words: str) -> re.Pattern[str]:
    """The English words with their slots as named groups."""
    slots = re.split(r"%\((\w+)\)s", words)
    return re.compile(
        "^"
        + "".join(
            re.escape(part) if i % 2 == 0 else f"(?P<{part}>.+?)" for i, part in enumerate(slots)
        )
        + "$"
    )


_BUILDING, _SCORE_REACHED, _RATE_UP = map(_pattern, (BUILDING, SCORE_REACHED, RATE_UP))


def flashpoint_text_in_language(text: str) -> str:
    """A flashpoint warning's text as the log keeps it (English: warning_due's) in the active
    language; a text it does not know (written before, or by hand) as it is."""
    building = _BUILDING.match(text)
    if building is None:
        return text
    reason = building["reason"]
    for english, found in ((SCORE_REACHED, _SCORE_REACHED), (RATE_UP, _RATE_UP)):
        parts = found.match(reason)
        if parts is not None:
            reason = gettext(english) % parts.groupdict()
            break
    return gettext(BUILDING) % {**building.groupdict(), "reason": reason}


def warned_zone_ids(fixture: Fixture, since: datetime, until: datetime) -> set[int]:
    """The zones with a warning observed after `since`, up to `until`."""
    return set(
        LogEntry.objects.filter(
            fixture=fixture,
            kind=LogEntry.Kind.WARNING,
            observed_at__gt=since,
            observed_at__lte=until,
        ).values_list("zone_id", flat=True)
    )


@dataclass(frozen=True)
class WarningDue:
    """A warning the scoring found due: what `log_entry_warn` is asked to write."""

    zone_id: int
    at: datetime
    severity: int
    text: str
    links: list[int]
    quiet_since: datetime


# The log's writer of a warning due (services.flashpoint_warning_write, handed in by the log's
# services, which import this module): the warning written, or None if another got there first.
WarningWrite = Callable[[Fixture, WarningDue], Any]


def warnings_due(
    *, fixture: Fixture, at: datetime, zone_ids: Iterable[int] | None = None
) -> list[WarningDue]:
    """Score the zones as of `at`: a warning due for each zone where trouble is building.

    Asked by the log's services once each report has committed, with the report's zones: only
    those zones and the zones that touch them can have moved (a score only rises when a report
    counts in it), and of those only the ones not warned within the cooldown need scoring, so in
    a storm of reports about a zone already warned the check is one query. `zone_ids=None` scores
    every zone. The scoring reads without holding the match's chain, so the next report need not
    wait for it; the writer (`log_entry_warn`) looks again under the chain's lock: two checks at
    once never warn twice for one zone.
    """
    conf = flashpoint_settings()
    quiet_since = at - timedelta(minutes=conf["cooldown_minutes"])
    candidates: set[int] | None = None
    if zone_ids is not None:
        neighbours = zone_neighbours(fixture)
        candidates = {z for z in zone_ids if z in neighbours}
        candidates |= {n for z in candidates for n in neighbours[z]}
        if candidates:
            candidates -= warned_zone_ids(fixture, quiet_since, at)
        if not candidates:
            return []
    building = [
        (zone, zone_building(zone, conf))
        for zone in zone_scores(fixture, at)
        if candidates is None or zone.zone_id in candidates
    ]
    building = [(zone, reason) for zone, reason in building if reason]
    if not building:
        return []
    # The candidates were already read without the zones warned within the cooldown.
    warned = warned_zone_ids(fixture, quiet_since, at) if candidates is None else set()
    return [
        warning_due(zone, reason, at, quiet_since=quiet_since, conf=conf)
        for zone, reason in building
        if zone.zone_id not in warned
    ]


def warning_due(
    zone: ZoneScore,
    reason: str,
    at: datetime,
    *,
    quiet_since: datetime,
    conf: dict[str, float],
) -> WarningDue:
    named = ", ".join(f"#{seq}" for seq in zone.causes[:12])
    return WarningDue(
        zone_id=zone.zone_id,
        at=at,
        severity=int(conf["warning_severity"]),
        text=BUILDING % {"zone": zone.zone_name, "reason": reason, "entries": named},
        links=zone.causes,
        quiet_since=quiet_since,
    )


def warnings_write(fixture: Fixture, due: Iterable[WarningDue], write: WarningWrite) -> list[Any]:
    """Write each warning due, in turn; the warnings written."""
    written = []
    for warning in due:
        stored = write(fixture, warning)
        if stored is not None:
            written.append(stored)
    return written
