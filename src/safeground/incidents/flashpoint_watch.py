"""Flashpoint scoring as reports come, off the request's path (the rules: flashpoint.py).

A report returns as soon as it has committed; this process's background threads then read the
entries after the last scored (one query) and score each new report's zones from the last
score. A zone's score is a sum of contributions each halved every half-life, so it is kept
scaled to a fixed origin (the sum of c * 2 ** (t / half_life)): bringing it to a later time is
one multiplication, and a report leaving the window one subtraction. A correction of a report
still in the window, or a report observed before the newest one scored, re-scores the window
from the reports kept in memory; only a process starting (or a log that was reset) reads the
window from the database. Each process keeps its own scores, as every process sees every
entry; `log_entry_warn` looks again under the chain's lock, so two never warn twice. The
warnings are written by the writer the log's services hand in (this module never imports them).
"""

import logging
import threading
from collections import deque
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from django.db import DatabaseError, connection

from safeground import background
from safeground.clock import stored_time
from safeground.matches.models import Fixture

from . import places
from .flashpoint import (
    PLACE_FIELDS,
    WarningWrite,
    ZoneScore,
    flashpoint_settings,
    warning_due,
    warnings_due,
    warnings_write,
    zone_building,
    zone_neighbours,
)
from .models import LogEntry
from .selectors import zone_map

logger = logging.getLogger(__name__)


@dataclass
class _Report:
    seq: int
    severity: int
    at: float  # seconds after the watch's origin
    zone_ids: frozenset[int]


@dataclass
class _ZoneWindow:
    """One zone's part of the window, oldest first: (at, seq, contribution) with their sum scaled
    to the origin; and the times of the reports in the zone itself in the last rate period and
    the one before it, for the rate rule."""

    items: deque[tuple[float, int, float]] = field(default_factory=deque)
    scaled: float = 0.0
    recent: deque[float] = field(default_factory=deque)
    before: deque[float] = field(default_factory=deque)


class MatchWatch:
    """The window of one match's reports as this process has scored them, advanced by seq."""

    REBASE_HALF_LIVES = 200  # 2 ** 200 is far inside a float; past it the origin moves up

    def __init__(self, fixture_id: int, write: WarningWrite) -> None:
        self.fixture_id = fixture_id
        self.write = write
        self.lock = threading.Lock()
        self.loaded = False
        self._clear()

    def _clear(self) -> None:
        self.last_seq = 0
        self.last_id = 0
        self.origin: datetime | None = None
        self.shift = 0.0  # the scaled sums' origin, in seconds after `origin`
        self.newest = float("-inf")
        self.reports: dict[int, _Report] = {}  # report id -> report, corrections applied
        self.zones: dict[int, _ZoneWindow] = {}
        self.warned: dict[int, list[float]] = {}

    def _t(self, when: datetime) -> float:
        if self.origin is None:
            self.origin = when
        return (when - self.origin).total_seconds()

    def _at(self, t: float) -> datetime:
        assert self.origin is not None
        return self.origin + timedelta(seconds=t)

    def advance(self, fixture: Fixture, first_id: int, last_id: int) -> list[Any]:
        """Fold the entries after the last scored, scoring each new report's zones, up to at
        least `last_id`; the warnings written. `first_id` is the first report committed since
        the scoring before: a watch starting afresh reads what came before it without scoring
        it (it was scored when it came, here or by the process that stored it)."""
        conf = flashpoint_settings()
        with self.lock:
            self.zone_map = zone_map(fixture)
            self.neighbours = zone_neighbours(fixture)
            if not self.loaded:
                self._load(fixture, conf, before_id=first_id)
            written = self._advance(fixture, conf)
            if last_id > self.last_id:
                # Entry ids only grow; one not met after the last seq scored belongs to a log
                # that was emptied and begun again (a restore): start from the database.
                self._load(fixture, conf, before_id=first_id)
                written += self._advance(fixture, conf)
            return written

    def _advance(self, fixture: Fixture, conf: dict[str, float]) -> list[Any]:
        written: list[Any] = []
        for row in _rows_after(fixture.pk, self.last_seq):
            report = self._fold(row, conf)
            if report is not None:
                written += self._check(fixture, report, conf)
        return written

    def _rows(self, fixture: Fixture, **where: Any) -> list[dict[str, Any]]:
        where.setdefault("kind__in", _KINDS)
        return list(
            LogEntry.objects.filter(fixture=fixture, **where)
            .order_by("seq")
            .values("id", "seq", "kind", "concerns_id", "observed_at", *PLACE_FIELDS)
        )

    def _load(self, fixture: Fixture, conf: dict[str, float], *, before_id: int) -> None:
        """Start from the database: of the entries before `before_id`, the reports and warnings
        recent enough to count and the corrections of those reports."""
        self._clear()
        self.loaded = True
        last = (
            LogEntry.objects.filter(fixture=fixture, id__lt=before_id)
            .order_by("-seq")
            .values("seq", "id")
            .first()
        )
        if last is None:
            return
        upto = {"seq__lte": last["seq"]}
        newest = (
            LogEntry.objects.filter(fixture=fixture, kind=LogEntry.Kind.REPORT, **upto)
            .order_by("-observed_at")
            .values_list("observed_at", flat=True)
            .first()
        )
        if newest is not None:
            keep = max(conf["window_minutes"], 2 * conf["rate_minutes"], conf["cooldown_minutes"])
            since = newest - timedelta(minutes=keep)
            for row in self._rows(fixture, **upto, observed_at__gte=since):
                self._fold(row, conf, scoring=False)
            for row in self._rows(fixture, **upto, kind=LogEntry.Kind.CORRECTION):
                self._fold(row, conf, scoring=False)
            self._rescore(conf)
        self.last_seq, self.last_id = last["seq"], last["id"]

    def _fold(
        self, row: dict[str, Any], conf: dict[str, float], *, scoring: bool = True
    ) -> _Report | None:
        """Fold one entry in; the report to score, if it is a report."""
        self.last_seq = max(self.last_seq, row["seq"])
        self.last_id = max(self.last_id, row["id"])
        t = self._t(row["observed_at"])
        if row["kind"] == LogEntry.Kind.WARNING:
            self.warned.setdefault(row["zone_id"], []).append(t)
            return None
        if row["kind"] == LogEntry.Kind.CORRECTION:
            report = self.reports.get(row["concerns_id"])
            if report is not None:
                if row["severity"]:
                    report.severity = row["severity"]
                if any(row[f] for f in PLACE_FIELDS[1:]):  # a corrected place replaces the old
                    report.zone_ids = self._zones_of(row)
                if scoring:
                    self._rescore(conf)
            return None
        report = _Report(row["seq"], row["severity"] or 0, t, self._zones_of(row))
        self.reports[row["id"]] = report
        if scoring:
            if t < self.newest:
                self._rescore(conf)
            else:
                self.newest = t
                self._add(report, conf)
        return report

    def _zones_of(self, row: dict[str, Any]) -> frozenset[int]:
        return frozenset(
            self.zone_map.zone_ids(
                block_id=row["block_id"],
                zone_id=row["zone_id"],
                gate_id=row["gate_id"],
                concourse_id=row["concourse_id"],
            )
        )

    def _add(self, report: _Report, conf: dict[str, float]) -> None:
        if not report.severity:
            return
        half_life = conf["half_life_minutes"] * 60
        if report.at - self.shift > self.REBASE_HALF_LIVES * half_life:
            self._rescore(conf)  # moves the origin up to the oldest report kept
            return
        own = [z for z in report.zone_ids if z in self.neighbours]
        touched = dict.fromkeys(own, float(report.severity))
        share = report.severity * conf["neighbour_share"]
        for zone_id in own:
            for neighbour in self.neighbours[zone_id]:
                touched[neighbour] = max(touched.get(neighbour, 0.0), share)
        for zone_id, value in touched.items():
            window = self.zones.setdefault(zone_id, _ZoneWindow())
            window.items.append((report.at, report.seq, value))
            window.scaled += value * 2 ** ((report.at - self.shift) / half_life)
        for zone_id in own:
            self.zones[zone_id].recent.append(report.at)

    def _rescore(self, conf: dict[str, float]) -> None:
        """Every zone's window again from the reports kept, in the order observed."""
        self.zones = {}
        if not self.reports:
            return
        self.newest = max(report.at for report in self.reports.values())
        keep = 60 * max(conf["window_minutes"], 2 * conf["rate_minutes"])
        self.reports = {pk: r for pk, r in self.reports.items() if r.at >= self.newest - keep}
        self.shift = min(report.at for report in self.reports.values())
        for report in sorted(self.reports.values(), key=lambda r: (r.at, r.seq)):
            self._add(report, conf)

    def _score(self, zone_id: int, t: float, conf: dict[str, float]) -> ZoneScore:
        """The zone's score at `t`, no earlier than any report in it (its causes left out)."""
        window = self.zones.get(zone_id) or _ZoneWindow()
        half_life = conf["half_life_minutes"] * 60
        while window.items and window.items[0][0] < t - conf["window_minutes"] * 60:
            at, _, value = window.items.popleft()
            window.scaled -= value * 2 ** ((at - self.shift) / half_life)
        rate = conf["rate_minutes"] * 60
        while window.recent and window.recent[0] < t - rate:
            window.before.append(window.recent.popleft())
        while window.before and window.before[0] < t - 2 * rate:
            window.before.popleft()
        return ZoneScore(
            zone_id=zone_id,
            zone_name=self.zone_map.names.get(zone_id, str(zone_id)),
            score=round(max(window.scaled, 0.0) * 2 ** ((self.shift - t) / half_life), 2),
            recent=len(window.recent),
            before=len(window.before),
            causes=[],
        )

    def _causes(self, zone_id: int, conf: dict[str, float]) -> list[int]:
        """The seqs of the reports counting in the zone, strongest first."""
        half_life = conf["half_life_minutes"] * 60
        items = self.zones[zone_id].items
        ranked = sorted(items, key=lambda i: i[2] * 2 ** ((i[0] - self.shift) / half_life))
        return [seq for _, seq, _ in reversed(ranked)]

    def _check(self, fixture: Fixture, report: _Report, conf: dict[str, float]) -> list[Any]:
        at = self._at(report.at)
        if report.at < self.newest:  # observed before a report already scored: exactly, from
            zone_ids = sorted(report.zone_ids)  # the database, as the scores here have moved on
            exact = warnings_due(fixture=fixture, at=at, zone_ids=zone_ids)
            return warnings_write(fixture, exact, self.write)
        quiet = report.at - conf["cooldown_minutes"] * 60
        candidates = {z for z in report.zone_ids if z in self.neighbours}
        candidates |= {n for z in candidates for n in self.neighbours[z]}
        written = []
        for zone_id in sorted(candidates):
            if any(quiet < w <= report.at for w in self.warned.get(zone_id, ())):
                continue
            zone = self._score(zone_id, report.at, conf)
            reason = zone_building(zone, conf)
            if not reason:
                continue
            zone = replace(zone, causes=self._causes(zone_id, conf))
            due = warning_due(zone, reason, at, quiet_since=self._at(quiet), conf=conf)
            warning = self.write(fixture, due)
            if warning is not None:
                self.warned.setdefault(zone_id, []).append(report.at)
                written.append(warning)
        return written


_KINDS = (LogEntry.Kind.REPORT, LogEntry.Kind.CORRECTION, LogEntry.Kind.WARNING)
# Plain SQL: the scoring reads the log after every gathering of reports in a storm, and the
# ORM's compiling of this query cost ten times its round trip (bench_live.py's append rate).
_ROWS_SQL = (
    f"SELECT id, seq, kind, concerns_id, observed_at, {', '.join(PLACE_FIELDS)}"
    f" FROM {LogEntry._meta.db_table} WHERE fixture_id = %s AND seq > %s"
    f" AND kind IN ({', '.join(['%s'] * len(_KINDS))}) ORDER BY seq"
)
_ROW_NAMES = ("id", "seq", "kind", "concerns_id", "observed_at", *PLACE_FIELDS)


def _rows_after(fixture_id: int, seq: int) -> list[dict[str, Any]]:
    """The reports, corrections and warnings of the match's log after `seq`, as MatchWatch._rows
    gives them."""
    with connection.cursor() as cursor:
        cursor.execute(_ROWS_SQL, [fixture_id, seq, *_KINDS])
        rows = [dict(zip(_ROW_NAMES, row, strict=True)) for row in cursor.fetchall()]
    for row in rows:
        row["observed_at"] = stored_time(row["observed_at"])
    return rows


GATHER_SECONDS = 0.05  # a warning may come this much later; in a storm, one read per 50 ms


class Watcher:
    """This process's flashpoint scoring: told of each report committed, it scores them in turn
    on the background threads (several at once when reports come faster than it scores), never
    on a request's thread, one scoring at a time. `safeground.background.settle()` waits for it."""

    def __init__(self, write: WarningWrite) -> None:
        self._write = write
        # fixture id -> the first and the last report id told of since its scoring before
        self._due: dict[int, tuple[int, int]] = {}
        self._scoring = False  # a scoring is on the clock or running: the next waits for it
        self._lock = threading.Lock()
        self._watches: dict[int, MatchWatch] = {}

    def report_stored(self, fixture_id: int, entry_id: int) -> None:
        with self._lock:
            first, last = self._due.get(fixture_id, (entry_id, entry_id))
            self._due[fixture_id] = (min(first, entry_id), max(last, entry_id))
            if not self._scoring:
                self._scoring = True
                self._gather()  # under the lock: settle() never sees it told and not yet due

    def _gather(self) -> None:
        # The reports of the next moment are scored with this one, in one read of the log.
        background.later(GATHER_SECONDS, self._run, name="flashpoint scoring")

    def watch(self, fixture_id: int) -> MatchWatch:
        if fixture_id not in self._watches:
            self._watches[fixture_id] = MatchWatch(fixture_id, self._write)
        return self._watches[fixture_id]

    def forget(self) -> None:
        """Drop every match's scores (a test starting afresh)."""
        background.settle()
        self._watches.clear()

    def _run(self) -> None:
        with self._lock:
            due, self._due = self._due, {}
        try:
            for fixture_id, (first_id, last_id) in due.items():
                self._score(fixture_id, first_id, last_id)
        finally:
            with self._lock:
                self._scoring = bool(self._due)  # told of more meanwhile: score them next
                if self._scoring:
                    self._gather()

    def _score(self, fixture_id: int, first_id: int, last_id: int) -> None:
        try:
            fixture = places.fixtures.get(
                fixture_id, lambda: Fixture.objects.select_related("ground").get(pk=fixture_id)
            )
            self.watch(fixture_id).advance(fixture, first_id, last_id)
        except DatabaseError as error:  # an outage: logged once by safeground.outage
            logger.warning(
                "flashpoint scoring of fixture %s waits for the database: %s", fixture_id, error
            )
        except Exception:
            # The reports stand; the next report scores the zone again.
            logger.exception("flashpoint scoring of fixture %s failed", fixture_id)
