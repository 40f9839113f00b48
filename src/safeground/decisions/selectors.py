"""Reads of the decision log: who may see which decision (the log's rule), the log as it stands
(struck-through amendments, reviews), reminders due, the radio's state and its periods; a major
incident's M/ETHANE report as it stands and its corrections."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db.models import QuerySet
from django.utils import timezone
from django.utils.translation import gettext as _

from safeground.accounts.permissions import (
    can_declare_major_incident,
    can_log_decisions,
    can_read_decisions,
    can_switch_radio,
    require,
    role_holders,
)
from safeground.incidents.models import Broadcast, LogEntry
from safeground.incidents.selectors import entries_seen_by
from safeground.matches.models import Fixture
from safeground.matches.selectors import fixture_for, plan_current

from .models import Decision, DecisionReview, MethaneReport, RadioSwitch
from .parts import KEYS, METHANE_PARTS, PARTS

# When the match plan has no fallback written: the Green Guide's back-up to the radio (the
# control point's landline to each post since Taylor, loudhailers when the speakers fail).
DEFAULT_FALLBACK = (
    "Control room to supervisors by the landline at each post, then by runners; stewards follow "
    "the instructions on their phones and acknowledge each; loudhailers if the public address "
    "fails; stay at your post unless told otherwise."
)


def fixture_for_decisions(user: Any, fixture_id: int) -> Fixture:
    """A match whose decision log the user may read (the control room's readers)."""
    fixture = fixture_for(user, fixture_id)
    require(can_read_decisions(user, fixture))
    return fixture


def fixture_for_logging_decisions(user: Any, fixture_id: int) -> Fixture:
    fixture = fixture_for_decisions(user, fixture_id)
    require(can_log_decisions(user, fixture))
    return fixture


def fixture_for_radio(user: Any, fixture_id: int) -> Fixture:
    fixture = fixture_for(user, fixture_id)
    require(can_switch_radio(user, fixture))
    return fixture


def decisions_seen_by(user: Any, fixture: Fixture) -> QuerySet[Decision]:
    """The match's decisions this user may see: the log's home-only rule on their entries
    (incidents.selectors.entries_seen_by), as for every other entry."""
    entries = entries_seen_by(
        user, fixture, LogEntry.objects.filter(fixture=fixture, kind=LogEntry.Kind.DECISION)
    )
    return (
        Decision.objects.filter(fixture=fixture, entry__in=entries)
        .select_related("entry", "amends__entry", "decision_maker")
        .prefetch_related("reviews__by", "reviews__entry", "amendments__entry")
        .order_by("entry__seq")
    )


def decision_seen_by(user: Any, fixture: Fixture, decision_id: int) -> Decision:
    from django.shortcuts import get_object_or_404

    return get_object_or_404(decisions_seen_by(user, fixture), pk=decision_id)


def decision_current(decision: Decision) -> Decision:
    """The decision as it stands: the last amendment of its line (itself if never amended)."""
    current = decision
    while (later := current.amendments.order_by("pk").first()) is not None:
        current = later
    return current


def review_due_at(decision: Decision) -> datetime | None:
    """When the decision is next to be reviewed: the latest review's next time, else its own."""
    reviews = sorted(decision.reviews.all(), key=lambda r: (r.at, r.pk))
    if reviews:
        return reviews[-1].next_review_at
    return decision.review_at


@dataclass
class DecisionRow:
    decision: Decision
    struck_by: int | None  # the seq of the amendment that strikes it through
    due_at: datetime | None
    due: bool
    reviews: list[DecisionReview] = field(default_factory=list)

    @property
    def seq(self) -> int:
        return self.decision.entry.seq

    @property
    def parts_said(self) -> list[tuple[Any, str]]:
        """(label, text) of each part it says, in the table's order, but the decision itself
        (the page's heading): what the page, its PDF and the report list."""
        said = [(part.label, getattr(self.decision, part.key)) for part in PARTS]
        return [(label, text) for label, text in said[1:] if text]


def decision_log(user: Any, fixture: Fixture, now: datetime | None = None) -> list[DecisionRow]:
    """The decision log in the order it was written, each row struck through once amended."""
    now = now or timezone.now()
    rows = []
    for decision in decisions_seen_by(user, fixture):
        amendments = list(decision.amendments.all())
        due_at = None if amendments else review_due_at(decision)
        rows.append(
            DecisionRow(
                decision=decision,
                struck_by=amendments[0].entry.seq if amendments else None,
                due_at=due_at,
                due=due_at is not None and due_at <= now,
                reviews=sorted(decision.reviews.all(), key=lambda r: (r.at, r.pk)),
            )
        )
    return rows


def reviews_due(user: Any, fixture: Fixture, now: datetime | None = None) -> list[DecisionRow]:
    return [row for row in decision_log(user, fixture, now) if row.due]


def decision_json(row: DecisionRow) -> dict[str, Any]:
    d = row.decision
    return {
        "id": d.pk,
        "seq": row.seq,
        **{key: getattr(d, key) for key in KEYS},
        "decision_maker": d.decision_maker_name,
        "decision_maker_role": d.decision_maker_role,
        "loggist": d.entry.author_name,
        "decided_at": d.decided_at,
        "logged_at": d.entry.logged_at,
        "retrospective_reason": d.retrospective_reason,
        "amends": d.amends.entry.seq if d.amends else None,
        "amendment_reason": d.amendment_reason,
        "struck_by": row.struck_by,
        "review_at": d.review_at,
        "review_due_at": row.due_at,
        "review_due": row.due,
        "reviews": [
            {
                "seq": r.entry.seq,
                "by": str(r.by),
                "at": r.at,
                "note": r.note,
                "next_review_at": r.next_review_at,
            }
            for r in row.reviews
        ],
        "links": d.links,
        "home_only": d.home_only,
        "kickoff_delay": d.kickoff_delay,
        "sha256": d.sha256,
        "hash": d.entry.hash,
    }


def radio_switches(fixture: Fixture) -> list[RadioSwitch]:
    return list(
        RadioSwitch.objects.filter(fixture=fixture).select_related("by").order_by("at", "pk")
    )


def radio_latest_switch(fixture: Fixture) -> RadioSwitch | None:
    """The radio's last switch, down or back up, with its decision."""
    switches = RadioSwitch.objects.filter(fixture=fixture).select_related("decision")
    return switches.order_by("-at", "-pk").first()


def radio_is_down(fixture: Fixture) -> bool:
    latest = radio_latest_switch(fixture)
    return bool(latest and latest.down)


def radio_down_since(fixture: Fixture) -> RadioSwitch | None:
    latest = radio_latest_switch(fixture)
    return latest if latest is not None and latest.down else None


@dataclass(frozen=True)
class RadioPeriod:
    began: datetime
    ended: datetime | None  # None: still down
    by: str
    instructions: str

    @property
    def minutes(self) -> float | None:
        if self.ended is None:
            return None
        return round((self.ended - self.began).total_seconds() / 60, 1)


def radio_periods(fixture: Fixture) -> list[RadioPeriod]:
    """Each time the radio was down: from the switch down to the switch back up."""
    periods: list[RadioPeriod] = []
    began: RadioSwitch | None = None
    for switch in radio_switches(fixture):
        if switch.down and began is None:
            began = switch
        elif not switch.down and began is not None:
            periods.append(RadioPeriod(began.at, switch.at, str(began.by), began.instructions))
            began = None
    if began is not None:
        periods.append(RadioPeriod(began.at, None, str(began.by), began.instructions))
    return periods


def fallback_instructions(fixture: Fixture) -> str:
    """What stewards do when the radio fails: the match plan's own words (communications, "when
    it fails"), or the Green Guide's back-up when there is no plan."""
    plan = plan_current(fixture)
    written = (plan.communications or {}).get("fallback", "").strip() if plan else ""
    return written or _(DEFAULT_FALLBACK)


@dataclass(frozen=True)
class BroadcastTimes:
    """One broadcast's acknowledgements: how many of those it was sent to, and how long after it
    was sent (seconds: the median and the slowest)."""

    id: int
    sent_at: datetime
    text: str
    recipients: int
    acknowledged: int
    median_ack: float | None
    worst_ack: float | None


def broadcast_times(fixture: Fixture) -> list[BroadcastTimes]:
    found = []
    broadcasts = Broadcast.objects.filter(fixture=fixture).prefetch_related("acks")
    for broadcast in broadcasts.order_by("sent_at", "pk"):
        waits = sorted(
            (ack.acked_at - broadcast.sent_at).total_seconds()
            for ack in broadcast.acks.all()
            if ack.user_id in broadcast.recipient_ids
        )
        found.append(
            BroadcastTimes(
                id=broadcast.pk,
                sent_at=broadcast.sent_at,
                text=broadcast.text,
                recipients=len(broadcast.recipient_ids),
                acknowledged=len(waits),
                median_ack=round(statistics.median(waits), 1) if waits else None,
                worst_ack=round(waits[-1], 1) if waits else None,
            )
        )
    return found


def commanders(fixture: Fixture) -> list[Any]:
    """Who may be named as the decision-maker: the home club's safety officers and the policing
    force's commanders."""
    from safeground.accounts.models import Role

    orgs = {fixture.ground.organisation_id: Role.SAFETY_OFFICER}
    for share in fixture.shares.all():
        if share.purpose == "police":
            orgs[share.organisation_id] = Role.POLICE_COMMANDER
    return sorted(
        {m.user for org, role in orgs.items() for m in role_holders(org, role)},
        key=lambda u: (str(u), u.pk),
    )


def decisions_report(user: Any, fixture: Fixture) -> dict[str, Any]:
    """The post-match report's part (reports/match_report views): the decision log as this
    reader may see it, each broadcast's acknowledgement times, the radio-down periods."""
    return {
        "decision_rows": decision_log(user, fixture),
        "broadcast_times": broadcast_times(fixture),
        "radio_periods": radio_periods(fixture),
    }


def decisions_citing(user: Any, fixture: Fixture, seqs: set[int]) -> list[dict[str, Any]]:
    """The decisions (as this user may see them) linked to any of these log entries: what a
    case bundle carries for its entries, each with its chained entry's hash and canonical form,
    so it is checked against the match's chain like the case's own entries."""
    from safeground.incidents.chain import canonical

    found = []
    for row in decision_log(user, fixture):
        if seqs.intersection(row.decision.links):
            entry = row.decision.entry
            found.append(
                {
                    **decision_json(row),
                    "prev_hash": entry.prev_hash,
                    "canonical": canonical(entry).decode(),
                }
            )
    return found


# --- a major incident's M/ETHANE report --------------------------------------------------------


def fixture_for_major_incident(user: Any, fixture_id: int) -> Fixture:
    """A match where the user may declare a major incident, or correct its report."""
    fixture = fixture_for(user, fixture_id)
    require(can_declare_major_incident(user, fixture))
    return fixture


def methane_latest(fixture: Fixture) -> MethaneReport | None:
    """The M/ETHANE report as it stands (None: no major incident declared at this match)."""
    return (
        MethaneReport.objects.filter(fixture=fixture, corrected_by__isnull=True)
        .select_related("entry")
        .first()
    )


def methane_report(fixture: Fixture, report_id: int) -> MethaneReport:
    from django.shortcuts import get_object_or_404

    return get_object_or_404(
        MethaneReport.objects.select_related("entry", "fixture"), pk=report_id, fixture=fixture
    )


def methane_reports(fixture: Fixture) -> list[MethaneReport]:
    """Every report of the match's major incident, the latest first."""
    return list(
        MethaneReport.objects.filter(fixture=fixture)
        .select_related("entry", "corrects__entry", "corrected_by__entry")
        .order_by("-entry__seq")
    )


@dataclass
class MethaneLine:
    """One part of a report as the page shows it."""

    key: str
    letter: str
    label: Any
    text: str
    struck: bool = False  # a later correction changed it
    # (what it said before, the correction that changed it), the latest first
    was: list[tuple[str, MethaneReport]] = field(default_factory=list)


@dataclass
class MethaneRow:
    report: MethaneReport
    lines: list[MethaneLine]

    @property
    def seq(self) -> int:
        return self.report.entry.seq

    @property
    def struck_by(self) -> MethaneReport | None:
        return getattr(self.report, "corrected_by", None)


def methane_history(fixture: Fixture) -> list[MethaneRow]:
    """The major incident's reports, the latest first: each part struck through where a later
    correction changed it; the latest's parts with what each said before."""
    reports = methane_reports(fixture)
    rows = []
    for report in reports:
        later = getattr(report, "corrected_by", None)
        rows.append(
            MethaneRow(
                report,
                [
                    MethaneLine(
                        p.key,
                        p.letter,
                        p.label,
                        getattr(report, p.key),
                        struck=later is not None
                        and getattr(later, p.key) != getattr(report, p.key),
                    )
                    for p in METHANE_PARTS
                ],
            )
        )
    if rows:
        for older, newer in zip(reports[1:], reports, strict=False):
            for line in rows[0].lines:
                if getattr(older, line.key) != getattr(newer, line.key):
                    line.was.append((getattr(older, line.key), newer))
    return rows


def methane_places(fixture: Fixture) -> list[str]:
    """The ground's stands, gates and blocks, as suggestions for the exact location."""
    ground = fixture.ground
    return [
        *(str(stand) for stand in ground.stands.all()),
        *(str(gate) for gate in ground.gates.all()),
        *(
            block.code if str(block) == block.code else f"{block}, {block.code}"
            for block in ground.blocks.all()
        ),
    ]
