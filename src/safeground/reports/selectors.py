"""Reads for the post-match report and the season dashboard. Reports writes nothing of its own.

Every figure is aggregated in the database (GROUP BY, COUNT): a season is tens of thousands of
log entries and millions of scans, and only the counts come back (docs/adr/0009-reports.md).
Which entries count:

- an *incident* is a report in the log (kind "report") that is not a decision (the category
  "decision": the control room's decisions and the debrief, recorded, not incidents); its
  category and severity are the ones it was reported with (a later correction is a new entry
  and does not move the count);
- *arrests* and *ejections* are reports in the "arrest" and "ejection" categories, and casework's
  arrest and ejection outcomes beyond those logged in the same case (an outcome recorded for an
  arrest already in the log is that arrest, not another), counted in one place,
  `arrests_and_ejections`; `arrests_by_offence` and `arrests_by_club` split the arrests by the
  Home Office's offence groups and by the arrested person's club, as far as the cases say;
- *admitted* is the number of tickets admitted at least once (a ticket's first admission, its
  `entered_at`), so a re-entry does not count a person twice; *denied* is every refused scan,
  by reason in the reason table's order and words (entry/rules.py); *prevented from attending*
  is entry's one definition, `entry.selectors.prevented_from_attending`;
- a *home-only* entry counts for the home club's staff only, as it shows only to them in the log.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

from django.db.models import Count, Min, Q, QuerySet
from django.db.models.functions import TruncMinute
from django.utils import timezone

from safeground import clock
from safeground.accounts.permissions import (
    can_read_match_report,
    can_read_season,
    require,
    sees_home_only,
)
from safeground.bans.models import Ban
from safeground.casework.models import Outcome
from safeground.entry.models import Scan, Ticket
from safeground.entry.rules import REASONS
from safeground.entry.selectors import prevented_from_attending
from safeground.incidents.checkpoints import checkpoints_for
from safeground.incidents.models import Broadcast, Category, LogEntry
from safeground.incidents.selectors import place_label
from safeground.incidents.verify import log_verify
from safeground.matches.models import FULL_TIME_MINUTES, Club, Competition, Fixture
from safeground.matches.selectors import fixture_for, fixture_zone_uses
from safeground.venues.models import Ground
from safeground.venues.plan import Plan
from safeground.venues.selectors import ground_for, ground_plan

ARREST = "arrest"
EJECTION = "ejection"
# The match clock the timeline marks (minutes from kick-off). Stoppage and extra time are not
# recorded anywhere yet, so these are the scheduled times, and the chart says so.
HALF_TIME = 45
SECOND_HALF = 60
FULL_TIME = FULL_TIME_MINUTES
TIMELINE_STEP = 5  # minutes per bar of the admissions timeline
# The timeline's reach from kick-off: the gates open well before it; an admission outside this
# (a clock set wrong) is counted in the figures but not drawn.
TIMELINE_FROM, TIMELINE_TO = -240, 180
# Debrief notes: the safety officer's decisions (the log's "decision" category, with their
# rationale) written from full time on. Decisions are records, not incidents.
DEBRIEF_ROLE = "safety_officer"
NOT_INCIDENTS = ("decision",)
RESOLVED = (LogEntry.Status.RESOLVED, LogEntry.Status.CLOSED)
BUSIEST_BLOCKS = 10


def _reports(fixture_ids: Collection[int], *, home_only: bool) -> QuerySet[LogEntry]:
    """The match's incidents as one viewer may count them (home-only ones for the home club)."""
    reports = LogEntry.objects.filter(fixture_id__in=fixture_ids, kind=LogEntry.Kind.REPORT)
    return reports if home_only else reports.filter(home_only=False)


def _incidents(fixture_ids: Collection[int], *, home_only: bool) -> QuerySet[LogEntry]:
    """Reports of something that happened: not the control room's decisions and debrief notes
    (category "decision"), which are in the log for the record."""
    return _reports(fixture_ids, home_only=home_only).exclude(category__code__in=NOT_INCIDENTS)


def arrests_and_ejections(
    fixture_ids: Collection[int], *, home_only: bool = True
) -> dict[int, dict[str, int]]:
    """fixture id -> {"arrests": n, "ejections": n}: the log's arrest and ejection reports, and
    the cases' outcomes beyond those logged in the same case."""
    counts = {pk: {"arrests": 0, "ejections": 0} for pk in fixture_ids}
    for fixture_id, code, n in (
        _reports(fixture_ids, home_only=home_only)
        .filter(category__code__in=(ARREST, EJECTION))
        .values_list("fixture_id", "category__code")
        .annotate(n=Count("pk"))
        .values_list("fixture_id", "category__code", "n")
        .order_by()
    ):
        counts[fixture_id]["arrests" if code == ARREST else "ejections"] += n
    for (fixture_id, kind), n in _outcomes_not_logged(fixture_ids).items():
        counts[fixture_id]["arrests" if kind == ARREST else "ejections"] += n
    return counts


def _outcomes_not_logged(fixture_ids: Collection[int]) -> Counter[tuple[int, str]]:
    """(fixture id, "arrest" or "ejection") -> the cases' outcomes of that kind that no report of
    the same kind among the case's log entries already counts (two queries)."""
    outcomes = list(
        Outcome.objects.filter(case__fixture_id__in=fixture_ids, kind__in=(ARREST, EJECTION))
        .values_list("case_id", "case__fixture_id", "kind")
        .annotate(n=Count("pk"))
        .values_list("case_id", "case__fixture_id", "kind", "n")
        .order_by()
    )
    logged: Counter[tuple[int, str]] = Counter(
        dict(
            ((case_id, code), n)
            for case_id, code, n in LogEntry.objects.filter(
                cases__in={case_id for case_id, *_ in outcomes},
                kind=LogEntry.Kind.REPORT,
                category__code__in=(ARREST, EJECTION),
            )
            .values_list("cases", "category__code")
            .annotate(n=Count("pk"))
            .values_list("cases", "category__code", "n")
            .order_by()
        )
    )
    beyond: Counter[tuple[int, str]] = Counter()
    for case_id, fixture_id, kind, n in outcomes:
        beyond[(fixture_id, kind)] += max(0, n - logged[(case_id, kind)])
    return beyond


NOT_RECORDED = "Not recorded in a case"


def arrests_by_offence(fixture_ids: Collection[int], total: int) -> list[dict[str, Any]]:
    """The arrests by the Home Office's offence groups (what a club and its force return each
    season), from the cases' arrest outcomes; arrests in the log without one are "not recorded"."""
    groups = dict(Outcome.HomeOfficeOffence.choices)
    found = dict(
        Outcome.objects.filter(case__fixture_id__in=fixture_ids, kind=Outcome.Kind.ARREST)
        .values_list("home_office_offence")
        .annotate(n=Count("pk"))
        .values_list("home_office_offence", "n")
        .order_by()
    )
    rows = [
        {"offence": groups.get(code, code or "Other"), "code": code, "arrests": n}
        for code, n in sorted(found.items(), key=lambda item: (-item[1], item[0]))
    ]
    unrecorded = total - sum(found.values())
    if unrecorded > 0:
        rows.append({"offence": NOT_RECORDED, "code": "", "arrests": unrecorded})
    return rows


def arrests_by_club(fixtures: Sequence[Fixture], total: int) -> list[dict[str, Any]]:
    """The arrests by the club whose supporters they were: a ticket holder by the end of their
    ticket; anyone else (a person on the register, someone not identified) "not known"."""
    by_fixture = {f.pk: f for f in fixtures}
    clubs: Counter[str] = Counter()
    known = 0
    for fixture_id, end in (
        Outcome.objects.filter(
            case__fixture_id__in=by_fixture,
            kind=Outcome.Kind.ARREST,
            subject__ticket__isnull=False,
        )
        .values_list("case__fixture_id", "subject__ticket__end")
        .order_by()
    ):
        fixture = by_fixture[fixture_id]
        clubs[(fixture.away_club if end == "away" else fixture.home_club).name] += 1
        known += 1
    rows = [{"club": name, "arrests": n} for name, n in clubs.most_common()]
    if total - known > 0:
        rows.append({"club": "Not known", "arrests": total - known})
    return rows


def _category_names() -> dict[int, tuple[str, str]]:
    return {
        pk: (code, name) for pk, code, name in Category.objects.values_list("pk", "code", "name")
    }


def _minutes(start: datetime, end: datetime | None) -> float | None:
    return None if end is None else round((end - start).total_seconds() / 60, 1)


def _median(values: Sequence[float]) -> float | None:
    return round(statistics.median(values), 1) if values else None


def response_times(fixture_ids: Collection[int], *, home_only: bool) -> QuerySet[LogEntry]:
    """Reports that were acted on, each with its first assignment and first resolution (the
    earliest action of each kind that concerns it), in one aggregate query."""
    return (
        _incidents(fixture_ids, home_only=home_only)
        .annotate(
            first_assigned=Min(
                "actions__observed_at", filter=Q(actions__kind=LogEntry.Kind.ASSIGNMENT)
            ),
            first_escalated=Min(
                "actions__observed_at", filter=Q(actions__kind=LogEntry.Kind.ESCALATION)
            ),
            first_resolved=Min(
                "actions__observed_at",
                filter=Q(actions__kind=LogEntry.Kind.STATUS, actions__status__in=RESOLVED),
            ),
        )
        .filter(
            Q(first_assigned__isnull=False)
            | Q(first_escalated__isnull=False)
            | Q(first_resolved__isnull=False)
        )
    )


# --- the post-match report -------------------------------------------------------------------


@dataclass
class MatchReport:
    fixture: Fixture
    admitted: int
    denied: list[dict[str, Any]]  # [{code, label, count}] in the reason table's order
    denied_total: int
    prevented: int
    timeline: dict[str, Any]
    incidents: list[dict[str, Any]]  # [{code, name, by_severity: [n1..n5], total}]
    incidents_total: int
    arrests: int
    ejections: int
    bans_proposed: dict[str, Any]
    blocks: dict[str, Any]
    escalations: list[dict[str, Any]]
    broadcasts: list[dict[str, Any]]
    chain: dict[str, Any]
    debrief: list[dict[str, Any]]
    plan: Plan | None = None
    marks: dict[str, int] = field(
        default_factory=lambda: {
            "kick_off": 0,
            "half_time": HALF_TIME,
            "second_half": SECOND_HALF,
            "full_time": FULL_TIME,
        }
    )

    def figures(self) -> dict[str, Any]:
        """The report as plain data: the API's answer and the JSON export."""
        return {
            "fixture": {
                "id": self.fixture.pk,
                "name": str(self.fixture),
                "kickoff": clock.iso(self.fixture.kickoff),
                "competition": self.fixture.competition.name,
                "ground": self.fixture.ground.code,
            },
            "admitted": self.admitted,
            "denied": {"total": self.denied_total, "by_reason": self.denied},
            "prevented": self.prevented,
            "timeline": self.timeline,
            "incidents": {"total": self.incidents_total, "by_category": self.incidents},
            "arrests": self.arrests,
            "ejections": self.ejections,
            "bans_proposed": self.bans_proposed,
            "incidents_by_block": {
                "blocks": self.blocks["counts"],
                "elsewhere": self.blocks["elsewhere"],
            },
            "escalations": self.escalations,
            "broadcasts": self.broadcasts,
            "chain": self.chain,
            "debrief": self.debrief,
        }


def match_report_for(user: Any, fixture_id: int) -> MatchReport:
    """The post-match report of one fixture, for a user who may read it."""
    fixture = fixture_for(user, fixture_id)
    require(can_read_match_report(user, fixture))
    return match_report(fixture, home_only=sees_home_only(user, fixture))


def match_report(
    fixture: Fixture, *, home_only: bool = True, with_plan: bool = True
) -> MatchReport:
    ids = [fixture.pk]
    denied, denied_total = _denials(fixture)
    incidents, incidents_total = _incidents_by_category(fixture, home_only=home_only)
    outcomes = arrests_and_ejections(ids, home_only=home_only)[fixture.pk]
    return MatchReport(
        fixture=fixture,
        admitted=Ticket.objects.filter(fixture=fixture, entered_at__isnull=False).count(),
        denied=denied,
        denied_total=denied_total,
        prevented=prevented_from_attending(ids)[fixture.pk],
        timeline=admissions_timeline(fixture),
        incidents=incidents,
        incidents_total=incidents_total,
        arrests=outcomes["arrests"],
        ejections=outcomes["ejections"],
        bans_proposed=bans_proposed(fixture),
        blocks=incidents_by_block(fixture, home_only=home_only),
        escalations=escalations(fixture, home_only=home_only),
        broadcasts=broadcasts_acknowledged(fixture),
        chain=chain_check(fixture),
        debrief=debrief_notes(fixture, home_only=home_only),
        plan=ground_plan(fixture.ground, fixture_zone_uses(fixture)) if with_plan else None,
    )


def _denials(fixture: Fixture) -> tuple[list[dict[str, Any]], int]:
    counts = dict(
        Scan.objects.filter(fixture=fixture, decision=Scan.Decision.DENY)
        .values_list("reason")
        .annotate(n=Count("pk"))
        .values_list("reason", "n")
        .order_by()
    )
    rows = [{"code": r.code, "label": r.label, "count": counts.get(r.code, 0)} for r in REASONS]
    return rows, sum(counts.values())


def _incidents_by_category(fixture: Fixture, *, home_only: bool) -> tuple[list[dict], int]:
    names = _category_names()
    table: dict[int, list[int]] = {}
    for category_id, severity, n in (
        _incidents([fixture.pk], home_only=home_only)
        .values_list("category_id", "severity")
        .annotate(n=Count("pk"))
        .values_list("category_id", "severity", "n")
        .order_by()
    ):
        row = table.setdefault(category_id, [0] * 5)
        if severity:
            row[severity - 1] += n
    rows: list[dict[str, Any]] = [
        {
            "code": names[pk][0] if pk in names else "",
            "name": names[pk][1] if pk in names else "No category",
            "by_severity": row,
            "total": sum(row),
        }
        for pk, row in table.items()
    ]
    rows.sort(key=lambda row: (-row["total"], row["name"]))
    return rows, sum(row["total"] for row in rows)


def admissions_timeline(fixture: Fixture) -> dict[str, Any]:
    """Tickets admitted per TIMELINE_STEP minutes, counted from kick-off (negative: before),
    grouped by the minute in the database and into steps here."""
    per_step: Counter[int] = Counter()
    for minute, n in (
        Ticket.objects.filter(fixture=fixture, entered_at__isnull=False)
        .annotate(minute=TruncMinute("entered_at", tzinfo=UTC))
        .values_list("minute")
        .annotate(n=Count("pk"))
        .values_list("minute", "n")
        .order_by()
    ):
        offset = (minute - fixture.kickoff).total_seconds() / 60
        if TIMELINE_FROM <= offset < TIMELINE_TO:
            per_step[int(offset // TIMELINE_STEP) * TIMELINE_STEP] += n
    if not per_step:
        return {"step": TIMELINE_STEP, "minutes": [], "admitted": []}
    first = min(min(per_step), 0)
    last = max(max(per_step), FULL_TIME)
    minutes = list(range(first, last + 1, TIMELINE_STEP))
    return {
        "step": TIMELINE_STEP,
        "minutes": minutes,
        "admitted": [per_step.get(m, 0) for m in minutes],
    }


def _next_kickoff(fixture: Fixture) -> datetime | None:
    return (
        Fixture.objects.filter(ground_id=fixture.ground_id, kickoff__gt=fixture.kickoff)
        .order_by("kickoff")
        .values_list("kickoff", flat=True)
        .first()
    )


def bans_proposed(fixture: Fixture) -> dict[str, Any]:
    """Bans the club's register proposed after this match and before the ground's next one (a
    ban carries no match: the window stands for 'arising from this match')."""
    until = _next_kickoff(fixture)
    window = Q(organisation_id=fixture.ground.organisation_id, created_at__gte=fixture.kickoff)
    if until is not None:
        window &= Q(created_at__lt=until)
    by_status = dict(
        Ban.objects.filter(window)
        .values_list("status")
        .annotate(n=Count("pk"))
        .values_list("status", "n")
        .order_by()
    )
    labels = dict(Ban.Status.choices)
    return {
        "total": sum(by_status.values()),
        "from": clock.iso(fixture.kickoff),
        "until": clock.iso(until) if until else None,
        "by_status": [
            {"status": status, "label": labels[status], "count": n}
            for status, n in sorted(by_status.items())
        ],
    }


def incidents_by_block(fixture: Fixture, *, home_only: bool) -> dict[str, Any]:
    """Reports per block of the seating plan, and those placed elsewhere (a gate, a concourse,
    a zone, outside the ground) by kind of place."""
    counts: dict[str, int] = {}
    elsewhere: Counter[str] = Counter()
    for code, concourse, gate, zone, outside, n in (
        _incidents([fixture.pk], home_only=home_only)
        .values_list("block__code", "concourse__name", "gate__name", "zone__name", "outside")
        .annotate(n=Count("pk"))
        .values_list("block__code", "concourse__name", "gate__name", "zone__name", "outside", "n")
        .order_by()
    ):
        if code:
            counts[code] = counts.get(code, 0) + n
        elif concourse:
            elsewhere[concourse] += n
        elif gate:
            elsewhere[gate] += n
        elif zone:
            elsewhere[zone] += n
        else:
            elsewhere["Outside the ground" if outside else "No place given"] += n
    return {
        "counts": counts,
        "most": max(counts.values(), default=0),
        "elsewhere": [{"place": place, "count": n} for place, n in elsewhere.most_common()],
    }


def escalations(fixture: Fixture, *, home_only: bool) -> list[dict[str, Any]]:
    """Incidents that were assigned, escalated or resolved: minutes from the report to the first
    assignment, escalation and resolution."""
    levels = dict(LogEntry.Level.choices)
    reached: dict[int, list[str]] = defaultdict(list)
    for concerns_id, level in (
        LogEntry.objects.filter(fixture=fixture, kind=LogEntry.Kind.ESCALATION)
        .order_by("seq")
        .values_list("concerns_id", "escalated_to")
    ):
        reached[concerns_id].append(levels.get(level, level))
    rows = []
    for report in (
        response_times([fixture.pk], home_only=home_only)
        .select_related("category", "block", "zone", "gate", "concourse")
        .order_by("seq")
    ):
        rows.append(
            {
                "seq": report.seq,
                "category": report.category.name if report.category else "",
                "severity": report.severity,
                "place": place_label(report),
                "text": report.text,
                "reported_at": clock.iso(report.observed_at),
                "to_assignment": _minutes(report.observed_at, report.first_assigned),  # type: ignore[attr-defined]
                "to_escalation": _minutes(report.observed_at, report.first_escalated),  # type: ignore[attr-defined]
                "to_resolution": _minutes(report.observed_at, report.first_resolved),  # type: ignore[attr-defined]
                "escalated_to": reached.get(report.pk, []),
            }
        )
    return rows


def broadcasts_acknowledged(fixture: Fixture) -> list[dict[str, Any]]:
    return [
        {
            "sent_at": clock.iso(b.sent_at),
            "script": b.get_script_display(),
            "text": b.text,
            "zone": b.zone.name if b.zone else "Everyone",
            "recipients": len(b.recipient_ids),
            "acknowledged": b.acked,
        }
        for b in Broadcast.objects.filter(fixture=fixture)
        .select_related("zone")
        .annotate(acked=Count("acks"))
        .order_by("sent_at")
    ]


def chain_check(fixture: Fixture) -> dict[str, Any]:
    """The log's chain recomputed and checked against its signed checkpoints, which the report
    carries so that whoever holds it can check the club's log later (ADR 0008)."""
    check = log_verify(fixture.pk)
    broken = check.chain_break
    return {
        "entries": check.entries,
        "intact": check.ok,
        "break": None if broken is None else {"seq": broken.seq, "reason": broken.reason},
        "problems": [problem.message for problem in check.problems],
        "anchored": check.anchored,
        "checkpoints": [
            {**c["statement"], "signature": c["signature"]} for c in checkpoints_for(fixture)
        ],
    }


def debrief_notes(fixture: Fixture, *, home_only: bool) -> list[dict[str, Any]]:
    """The safety officer's decisions from full time on: their debrief, in the log like the
    rest (a report in the "decision" category)."""
    full_time = fixture.kickoff + timedelta(minutes=FULL_TIME)
    return [
        {"seq": seq, "at": clock.iso(at), "author": author, "text": text}
        for seq, at, author, text in _reports([fixture.pk], home_only=home_only)
        .filter(
            author_role=DEBRIEF_ROLE, observed_at__gte=full_time, category__code__in=NOT_INCIDENTS
        )
        .order_by("seq")
        .values_list("seq", "observed_at", "author_name", "text")
    ]


# --- the season dashboard --------------------------------------------------------------------


@dataclass(frozen=True)
class SeasonFilter:
    competition: int | None = None
    opponent: int | None = None  # a visiting club: its matches at the ground


@dataclass
class Season:
    ground: Ground
    filters: SeasonFilter
    matches: list[dict[str, Any]]
    categories: list[dict[str, str]]
    bans: list[dict[str, Any]]
    busiest_blocks: list[dict[str, Any]]
    totals: dict[str, Any]
    arrests_by_offence: list[dict[str, Any]]
    arrests_by_club: list[dict[str, Any]]
    competitions: list[Competition]
    opponents: list[Club]

    def figures(self) -> dict[str, Any]:
        return {
            "ground": self.ground.code,
            "filters": {
                "competition": self.filters.competition,
                "opponent": self.filters.opponent,
            },
            "totals": self.totals,
            "categories": self.categories,
            "matches": self.matches,
            "bans": self.bans,
            "busiest_blocks": self.busiest_blocks,
            "arrests_by_offence": self.arrests_by_offence,
            "arrests_by_club": self.arrests_by_club,
        }


def season_for(user: Any, code: str, filters: SeasonFilter) -> Season:
    ground = ground_for(user, code)
    require(can_read_season(user, ground))
    return season(ground, filters)


def season_fixtures(ground: Ground, filters: SeasonFilter) -> QuerySet[Fixture]:
    """The ground's matches played so far, oldest first, as the filters narrow them."""
    fixtures = Fixture.objects.filter(ground=ground, kickoff__lte=timezone.now())
    if filters.competition:
        fixtures = fixtures.filter(competition_id=filters.competition)
    if filters.opponent:
        fixtures = fixtures.filter(away_club_id=filters.opponent)
    return fixtures.select_related("home_club", "away_club", "competition").order_by("kickoff")


def season(ground: Ground, filters: SeasonFilter) -> Season:
    fixtures = list(season_fixtures(ground, filters))
    ids = [f.pk for f in fixtures]
    names = _category_names()
    by_category: dict[int, Counter[str]] = defaultdict(Counter)
    for fixture_id, category_id, n in (
        _incidents(ids, home_only=True)
        .values_list("fixture_id", "category_id")
        .annotate(n=Count("pk"))
        .values_list("fixture_id", "category_id", "n")
        .order_by()
    ):
        by_category[fixture_id][names[category_id][0] if category_id in names else ""] += n
    outcomes = arrests_and_ejections(ids)
    denied: dict[int, int] = dict(
        Scan.objects.filter(fixture_id__in=ids, decision=Scan.Decision.DENY)
        .values_list("fixture_id")
        .annotate(n=Count("pk"))
        .values_list("fixture_id", "n")
        .order_by()
    )
    prevented = prevented_from_attending(ids)
    assigned: dict[int, list[float]] = defaultdict(list)
    resolved: dict[int, list[float]] = defaultdict(list)
    for fixture_id, at, first_assigned, first_resolved in response_times(
        ids, home_only=True
    ).values_list("fixture_id", "observed_at", "first_assigned", "first_resolved"):  # type: ignore[misc]
        if first_assigned is not None:
            assigned[fixture_id].append((first_assigned - at).total_seconds() / 60)
        if first_resolved is not None:
            resolved[fixture_id].append((first_resolved - at).total_seconds() / 60)
    used = Counter[str]()
    for counts in by_category.values():
        used.update(counts)
    categories = [
        {"code": code, "name": name}
        for code, name in sorted(names.values(), key=lambda c: -used[c[0]])
        if used[code]
    ]
    matches: list[dict[str, Any]] = []
    for f in fixtures:
        opponent = f.away_club
        matches.append(
            {
                "id": f.pk,
                "date": timezone.localtime(f.kickoff).date().isoformat(),
                "label": f"{timezone.localtime(f.kickoff):%d %b} v {opponent.short_name}",
                "opponent": opponent.name,
                "competition": f.competition.name,
                "incidents": dict(by_category.get(f.pk, {})),
                "incidents_total": sum(by_category.get(f.pk, Counter()).values()),
                "arrests": outcomes[f.pk]["arrests"],
                "ejections": outcomes[f.pk]["ejections"],
                "denied": denied.get(f.pk, 0),
                "prevented": prevented[f.pk],
                "median_to_assignment": _median(assigned.get(f.pk, [])),
                "median_to_resolution": _median(resolved.get(f.pk, [])),
            }
        )
    busiest = [
        {"block": code, "incidents": n}
        for code, n in _incidents(ids, home_only=True)
        .filter(block__isnull=False)
        .values_list("block__code")
        .annotate(n=Count("pk"))
        .order_by("-n", "block__code")
        .values_list("block__code", "n")[:BUSIEST_BLOCKS]
    ]
    bans = bans_over_time(ground, [timezone.localtime(f.kickoff).date() for f in fixtures])
    all_to_assignment = [v for values in assigned.values() for v in values]
    all_to_resolution = [v for values in resolved.values() for v in values]
    arrests = sum(m["arrests"] for m in matches)
    totals = {
        "matches": len(matches),
        "incidents": sum(m["incidents_total"] for m in matches),
        "arrests": arrests,
        "ejections": sum(m["ejections"] for m in matches),
        "denied": sum(m["denied"] for m in matches),
        "prevented": sum(m["prevented"] for m in matches),
        "bans_issued": bans[-1]["issued"] if bans else 0,
        "bans_in_force": bans[-1]["in_force"] if bans else 0,
        "median_to_assignment": _median(all_to_assignment),
        "median_to_resolution": _median(all_to_resolution),
    }
    return Season(
        ground=ground,
        filters=filters,
        matches=matches,
        categories=categories,
        bans=bans,
        busiest_blocks=busiest,
        totals=totals,
        arrests_by_offence=arrests_by_offence(ids, arrests),
        arrests_by_club=arrests_by_club(fixtures, arrests),
        competitions=list(
            Competition.objects.filter(fixture__ground=ground).distinct().order_by("name")
        ),
        opponents=list(
            Club.objects.filter(away_fixtures__ground=ground).distinct().order_by("name")
        ),
    )


# A ban that took effect: approved, and whatever became of it later (in force, ended).
TOOK_EFFECT = (
    Ban.Status.APPROVED,
    Ban.Status.ACTIVE,
    Ban.Status.APPEALED,
    Ban.Status.UPHELD,
    Ban.Status.REVOKED,
    Ban.Status.EXPIRED,
)


def bans_over_time(ground: Ground, days: Sequence[date]) -> list[dict[str, Any]]:
    """On each match day: the bans of the ground's club issued this season so far (starting
    from the first of these days' season, 1 August), and the bans in force that day. One
    query: a filtered count per day."""
    if not days:
        return []
    first = days[0]
    season_start = date(first.year if first.month >= 8 else first.year - 1, 8, 1)
    took_effect = Ban.objects.filter(organisation_id=ground.organisation_id, status__in=TOOK_EFFECT)
    counts: dict[str, Any] = {}
    for n, day in enumerate(days):
        counts[f"issued_{n}"] = Count(
            "pk", filter=Q(starts_on__gte=season_start, starts_on__lte=day)
        )
        counts[f"in_force_{n}"] = Count(
            "pk",
            filter=Q(starts_on__lte=day)
            & (Q(ends_on__isnull=True) | Q(ends_on__gte=day))
            & (Q(ended_on__isnull=True) | Q(ended_on__gt=day)),
        )
    row = took_effect.aggregate(**counts)
    return [
        {"date": day.isoformat(), "issued": row[f"issued_{n}"], "in_force": row[f"in_force_{n}"]}
        for n, day in enumerate(days)
    ]
