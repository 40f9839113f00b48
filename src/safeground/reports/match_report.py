"""The post-match report of one fixture (what counts as what: selectors.py)."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime, time, timedelta
from typing import Any

from django.db.models import Count, Q
from django.db.models.functions import TruncMinute
from django.utils import timezone
from django.utils.translation import gettext as _

from safeground import clock
from safeground.accounts.permissions import can_read_match_report, is_home_staff, require
from safeground.alerts.selectors import deliveries
from safeground.bans.models import Ban
from safeground.entry.models import Scan, Ticket
from safeground.entry.rules import REASONS
from safeground.entry.selectors import prevented_from_attending
from safeground.incidents.checkpoints import checkpoints_for
from safeground.incidents.models import Broadcast, LogCheckpoint, LogEntry
from safeground.incidents.selectors import place_label
from safeground.incidents.verify import log_verify
from safeground.languages import in_language
from safeground.matches.models import FULL_TIME_MINUTES, Fixture
from safeground.matches.seasons import season_of
from safeground.matches.selectors import fixture_for, fixture_zone_uses
from safeground.supporters.selectors import supporters_summary
from safeground.venues.plan import Plan
from safeground.venues.selectors import ground_plan

from .selectors import (
    DECISION,
    arrests_and_ejections,
    category_names,
    counted_incidents,
    counted_reports,
    response_times,
)

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
    supporters: dict[str, Any] | None = None  # the home club's staff only
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
            **({"supporters": self.supporters} if self.supporters is not None else {}),
        }


def match_report_for(user: Any, fixture_id: int) -> MatchReport:
    """The post-match report of one fixture, for a user who may read it."""
    fixture = fixture_for(user, fixture_id)
    require(can_read_match_report(user, fixture))
    return match_report(fixture, home_only=is_home_staff(user, fixture))


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
        supporters=supporters_summary(fixture) if home_only else None,
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
    """The incidents by category and severity; arrests and ejections are counted apart (an
    arrest is not an incident), as the season counts them."""
    names = category_names()
    table: dict[int, list[int]] = {}
    for category_id, severity, n in (
        counted_incidents([fixture.pk], home_only=home_only)
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
            "name": names[pk][1] if pk in names else _("No category"),
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


def _bans_window_end(fixture: Fixture) -> tuple[datetime, str]:
    """When the bans arising from this match stop being counted, and why: the ground's next
    match, or the end of the match's season if that comes first (a rerun years later, or the
    last match of a season, would count every ban since)."""
    season = season_of(timezone.localdate(fixture.kickoff))
    season_end = timezone.make_aware(datetime.combine(season.end + timedelta(days=1), time()))
    following = (
        Fixture.objects.filter(ground_id=fixture.ground_id, kickoff__gt=fixture.kickoff)
        .order_by("kickoff")
        .values_list("kickoff", flat=True)
        .first()
    )
    if following is not None and following < season_end:
        return following, "next_match"
    return season_end, "season_end"


def bans_proposed(fixture: Fixture) -> dict[str, Any]:
    """Bans the club's register proposed after this match and before the ground's next one,
    within the match's season (a ban carries no match: the window stands for 'arising from this
    match')."""
    until, bound = _bans_window_end(fixture)
    window = Q(
        organisation_id=fixture.ground.organisation_id,
        created_at__gte=fixture.kickoff,
        created_at__lt=until,
    )
    by_status = dict(
        Ban.objects.filter(window)
        .values_list("status")
        .annotate(n=Count("pk"))
        .values_list("status", "n")
        .order_by()
    )
    labels = {value: str(label) for value, label in Ban.Status.choices}  # JSON's: text
    return {
        "total": sum(by_status.values()),
        "from": clock.iso(fixture.kickoff),
        "until": clock.iso(until),
        "until_is": bound,
        "season": season_of(timezone.localdate(fixture.kickoff)).label,
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
    places = ("concourse", "gate", "zone")
    fields = ["block__code", *(f"{p}__{f}" for p in places for f in ("name", "names")), "outside"]
    for code, concourse, concourse_names, gate, gate_names, zone, zone_names, outside, n in (
        counted_incidents([fixture.pk], home_only=home_only)
        .values_list(*fields)
        .annotate(n=Count("pk"))
        .values_list(*fields, "n")
        .order_by()
    ):
        if code:
            counts[code] = counts.get(code, 0) + n
        elif concourse:
            elsewhere[in_language(concourse, concourse_names)] += n
        elif gate:
            elsewhere[in_language(gate, gate_names)] += n
        elif zone:
            elsewhere[in_language(zone, zone_names)] += n
        else:
            elsewhere[_("Outside the ground") if outside else _("No place given")] += n
    return {
        "counts": counts,
        "most": max(counts.values(), default=0),
        "elsewhere": [{"place": place, "count": n} for place, n in elsewhere.most_common()],
    }


def escalations(fixture: Fixture, *, home_only: bool) -> list[dict[str, Any]]:
    """Incidents that were assigned, escalated or resolved: minutes from the report to the first
    assignment, escalation and resolution."""
    levels = {value: str(label) for value, label in LogEntry.Level.choices}
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
    """Each broadcast, with its delivery to phones and acknowledgement, recipient by recipient."""
    sent = list(
        Broadcast.objects.filter(fixture=fixture)
        .select_related("zone")
        .annotate(acked=Count("acks"))
        .order_by("sent_at")
    )
    return [
        {
            "sent_at": clock.iso(b.sent_at),
            "script": b.get_script_display(),
            "text": b.text,
            "zone": b.zone.local_name if b.zone else _("Everyone"),
            "recipients": len(b.recipient_ids),
            "acknowledged": b.acked,
            **delivery.report(),
        }
        for b, delivery in zip(sent, deliveries(sent), strict=True)
    ]


def chain_check(fixture: Fixture) -> dict[str, Any]:
    """The log's chain recomputed and checked against its signed checkpoints, which the report
    carries so that whoever holds it can check the club's log later (ADR 0008)."""
    check = log_verify(fixture.pk)
    broken = check.chain_break
    reasons = dict(LogCheckpoint.Reason.choices)
    return {
        "entries": check.entries,
        "intact": check.ok,
        "break": None if broken is None else {"seq": broken.seq, "reason": broken.reason},
        "problems": [problem.message for problem in check.problems],
        "anchored": check.anchored,
        "checkpoints": [
            {
                **c["statement"],
                "signature": c["signature"],
                "reason_label": str(reasons.get(reason := c["statement"]["reason"], reason)),
            }
            for c in checkpoints_for(fixture)
        ],
    }


def debrief_notes(fixture: Fixture, *, home_only: bool) -> list[dict[str, Any]]:
    """The safety officer's decisions from full time on: their debrief, in the log like the
    rest (a report in the "decision" category)."""
    full_time = fixture.kickoff + timedelta(minutes=FULL_TIME)
    return [
        {"seq": seq, "at": clock.iso(at), "author": author, "text": text}
        for seq, at, author, text in counted_reports([fixture.pk], home_only=home_only)
        .filter(author_role=DEBRIEF_ROLE, observed_at__gte=full_time, category__code=DECISION)
        .order_by("seq")
        .values_list("seq", "observed_at", "author_name", "text")
    ]


def _minutes(start: datetime, end: datetime | None) -> float | None:
    return None if end is None else round((end - start).total_seconds() / 60, 1)
