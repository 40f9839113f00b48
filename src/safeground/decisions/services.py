"""Writes of the decision log: a decision recorded, amended, reviewed; the radio switched down and
back up; a major incident declared and its M/ETHANE report corrected. Each is one transaction
that appends to the match's one chained log (`incidents.services.log_record_append`) and goes out
live on commit."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from safeground import clock
from safeground.accounts.models import User
from safeground.accounts.permissions import (
    can_declare_major_incident,
    can_log_decisions,
    can_make_decisions,
    can_switch_radio,
    plan_sign_roles,
)
from safeground.errors import Forbidden, SafegroundError, too_long
from safeground.incidents.broadcasting import broadcast_send
from safeground.incidents.chain_lock import log_chain_lock
from safeground.incidents.models import LogEntry
from safeground.incidents.selectors import RECORD_KINDS, current_posts
from safeground.incidents.services import LogEntryError, log_record_append
from safeground.live.catalogue import DECISION, MAJOR_INCIDENT, RADIO_STATUS
from safeground.live.events import Audience, publish
from safeground.matches.models import Fixture
from safeground.matches.services import fixture_kickoff_delay

from . import hooks
from .models import Decision, DecisionReview, MethaneReport, RadioSwitch
from .parts import KEYS, METHANE_MAX, METHANE_PARTS, REQUIRED
from .selectors import (
    decision_current,
    fallback_instructions,
    methane_latest,
    radio_is_down,
    review_due_at,
)

# JESIP: a decision is logged as it is made; one logged later than this says why (retrospective).
RETROSPECTIVE_AFTER = timedelta(minutes=5)
MAX_TEXT = 4000


class DecisionError(SafegroundError):
    """A decision, an amendment or a review refused; `field` names what is wrong."""

    code = "decision_refused"


class DecisionNotFound(DecisionError):
    """What it names is not there (or not one you may see) (404)."""

    status = 404


class DecisionConflict(DecisionError):
    """Well formed, but refused by the state of things (409)."""

    status = 409


@dataclass(frozen=True)
class DecisionParts:
    """What a decision says (the National Decision Model's parts)."""

    decision: str
    rationale: str
    information: str = ""
    threat_assessment: str = ""
    powers_policy: str = ""
    options_considered: str = ""
    options_rejected: str = ""
    review_at: datetime | None = None
    links: tuple[int, ...] = field(default_factory=tuple)
    home_only: bool = False
    kickoff_delay: int | None = None  # minutes the kick-off is put back


# The text parts, from the table (decisions.parts); DecisionParts has a field for each
# (tests/decisions/test_parts.py).
TEXT_PARTS = KEYS


def _time(value: datetime | None) -> str | None:
    return None if value is None else clock.utc_iso(value, "microseconds")


def digest(fields: dict[str, Any]) -> str:
    """The SHA-256 of a decision's canonical form (sorted JSON, UTC times): its entry carries it,
    so the chain anchors every word of the decision."""
    canonical = json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def decision_fields(decision: Decision) -> dict[str, Any]:
    """The canonical fields of a stored decision (what `digest` was computed over)."""
    return {
        **{name: getattr(decision, name) for name in TEXT_PARTS},
        "review_at": _time(decision.review_at),
        "decision_maker": decision.decision_maker_id,
        "decision_maker_name": decision.decision_maker_name,
        "decision_maker_role": decision.decision_maker_role,
        "decided_at": _time(decision.decided_at),
        "retrospective_reason": decision.retrospective_reason,
        "amends": decision.amends.entry.seq if decision.amends else None,
        "amendment_reason": decision.amendment_reason,
        "links": list(decision.links),
        "home_only": decision.home_only,
        # Only where given, so every decision logged before the field has its digest still.
        **({"kickoff_delay": decision.kickoff_delay} if decision.kickoff_delay is not None else {}),
    }


def _clean(parts: DecisionParts) -> dict[str, str]:
    texts = {name: str(getattr(parts, name)).strip() for name in TEXT_PARTS}
    for name in REQUIRED:
        if not texts[name]:
            raise DecisionError(name, _("must not be empty"))
    for name, text in texts.items():
        if len(text) > MAX_TEXT:
            raise DecisionError(name, too_long(len(text), MAX_TEXT))
    return texts


def _check_times(
    parts: DecisionParts, decided_at: datetime | None, retrospective_reason: str, now: datetime
) -> datetime:
    decided = now if decided_at is None else decided_at
    if timezone.is_naive(decided):
        raise DecisionError("decided_at", _("give a time with its time zone"))
    if decided > now + timedelta(seconds=settings.SAFEGROUND_CLOCK_SKEW_SECONDS):
        raise DecisionConflict("decided_at", _("is in the future"))  # the clock refuses
    late = now - decided
    if late > RETROSPECTIVE_AFTER and not retrospective_reason.strip():
        minutes = int(late.total_seconds() // 60)
        # The clock, not the request's form, refuses it: a 409 in the API and on pages alike.
        raise DecisionConflict(
            "retrospective_reason",
            _(
                "logged %(minutes)s minutes after it was made: say why it is logged late "
                "(a retrospective entry)"
            )
            % {"minutes": minutes},
        )
    if parts.review_at is not None:
        if timezone.is_naive(parts.review_at):
            raise DecisionError("review_at", _("give a time with its time zone"))
        if parts.review_at <= decided:
            after = {"decided": clock.local_time(decided)}
            raise DecisionConflict(
                "review_at", _("must be after the time decided (%(decided)s)") % after
            )
    return decided


def _check_links(fixture: Fixture, links: tuple[int, ...]) -> list[int]:
    wanted = sorted(set(links))
    known = set(
        LogEntry.objects.filter(fixture=fixture, seq__in=wanted)
        .exclude(kind__in=RECORD_KINDS)
        .values_list("seq", flat=True)
    )
    missing = [seq for seq in wanted if seq not in known]
    if missing:
        raise DecisionNotFound(
            "links",
            _("no entries %(seqs)s in this match's log")
            % {"seqs": ", ".join(f"#{seq}" for seq in missing)},
        )
    return wanted


MAX_KICKOFF_DELAY = 180  # minutes; longer is a postponement, not a delay


def _check_delay(minutes: int | None) -> int | None:
    if minutes is not None and not 0 <= minutes <= MAX_KICKOFF_DELAY:
        raise DecisionError(
            "kickoff_delay",
            _("from 0 to %(most)s minutes (0: back to the planned kick-off)")
            % {"most": MAX_KICKOFF_DELAY},
        )
    return minutes


def _commander_role(user: User, fixture: Fixture) -> str:
    roles = plan_sign_roles(user, fixture)
    if not roles:
        raise DecisionConflict(
            "decision_maker",
            _(
                "%(name)s is not a commander of this match: "
                "the safety officer or the police commander"
            )
            % {"name": user},
        )
    return sorted(roles)[0]


def _publish(decision: Decision, action: str, seq: int) -> None:
    publish(
        fixture_id=decision.fixture_id,
        type=DECISION,
        data={
            "id": decision.pk,
            "seq": decision.entry.seq,
            "action": action,
            "amends": decision.amends_id,
            "decision_maker": decision.decision_maker_name,
            "decided_at": clock.iso(decision.decided_at),
            "review_at": clock.iso(decision.review_at) if decision.review_at else None,
        },
        # The log's rule for an entry with no zone: everyone working the match but stewards,
        # and a home-only decision for the home club's staff alone.
        audience=Audience(home_only=decision.home_only),
        chain_seq=seq,
    )


def _write(
    *,
    fixture: Fixture,
    loggist: User,
    decision_maker: User,
    parts: DecisionParts,
    decided_at: datetime | None,
    retrospective_reason: str,
    amends: Decision | None = None,
    amendment_reason: str = "",
) -> Decision:
    if not can_log_decisions(loggist, fixture):
        raise Forbidden("loggist", _("you may not log decisions at this match"))
    texts = _clean(parts)
    now = timezone.now()
    decided = _check_times(parts, decided_at, retrospective_reason, now)
    decision = Decision(
        fixture=fixture,
        **texts,
        review_at=parts.review_at,
        decision_maker=decision_maker,
        decision_maker_name=str(decision_maker),
        decision_maker_role=_commander_role(decision_maker, fixture),
        decided_at=decided,
        retrospective_reason=retrospective_reason.strip(),
        amends=amends,
        amendment_reason=amendment_reason.strip(),
        links=_check_links(fixture, parts.links),
        home_only=parts.home_only,
        kickoff_delay=_check_delay(parts.kickoff_delay),
    )
    decision.sha256 = digest(decision_fields(decision))
    amended = f"; amends #{amends.entry.seq}" if amends else ""
    entry = log_record_append(
        fixture=fixture,
        author=loggist,
        kind=LogEntry.Kind.DECISION,
        observed_at=decided,
        text=decision.decision,
        note=f"decision sha256 {decision.sha256} by {decision.decision_maker_name}{amended}",
        links=decision.links,
        home_only=decision.home_only,
    )
    decision.entry = entry
    decision.save()
    if decision.kickoff_delay is not None:
        fixture_kickoff_delay(fixture=fixture, minutes=decision.kickoff_delay)
    _publish(decision, "amended" if amends else "logged", entry.seq)
    hooks.decision_recorded(decision)
    return decision


@transaction.atomic
def decision_record(
    *,
    fixture: Fixture,
    loggist: User,
    decision_maker: User,
    parts: DecisionParts,
    decided_at: datetime | None = None,
    retrospective_reason: str = "",
) -> Decision:
    """A commander's decision, recorded by the loggist (who may be the commander): both named,
    the time decided and the time logged both kept; logged more than 5 minutes after it was
    made, it says why."""
    return _write(
        fixture=fixture,
        loggist=loggist,
        decision_maker=decision_maker,
        parts=parts,
        decided_at=decided_at,
        retrospective_reason=retrospective_reason,
    )


@transaction.atomic
def decision_amend(
    *,
    decision: Decision,
    loggist: User,
    decision_maker: User,
    parts: DecisionParts,
    reason: str,
    decided_at: datetime | None = None,
    retrospective_reason: str = "",
) -> Decision:
    """An amendment: a new decision in the chain that strikes the old one through (never an
    edit). Only the decision as it stands (not one already struck through) is amended."""
    if not reason.strip():
        raise DecisionError("reason", _("say why the decision is amended"))
    current = decision_current(decision)
    if current.pk != decision.pk:
        raise DecisionConflict(
            "decision",
            _("#%(decision)s is already amended by #%(amendment)s: amend that")
            % {"decision": decision.entry.seq, "amendment": current.entry.seq},
        )
    return _write(
        fixture=decision.fixture,
        loggist=loggist,
        decision_maker=decision_maker,
        parts=parts,
        decided_at=decided_at,
        retrospective_reason=retrospective_reason,
        amends=decision,
        amendment_reason=reason,
    )


@transaction.atomic
def decision_review(
    *, decision: Decision, by: User, note: str, next_review_at: datetime | None = None
) -> DecisionReview:
    """The decision reviewed (its reminder answered): it stands, with what was found, and
    perhaps a next review time. A chained entry, as the decision is."""
    fixture = decision.fixture
    if not can_log_decisions(by, fixture):
        raise Forbidden("by", _("you may not log decisions at this match"))
    note = note.strip()
    if not note:
        raise DecisionError("note", _("say what the review found"))
    if len(note) > MAX_TEXT:
        raise DecisionError("note", too_long(len(note), MAX_TEXT))
    if decision_current(decision).pk != decision.pk:
        raise DecisionConflict(
            "decision", _("this decision is struck through: review the amendment")
        )
    if review_due_at(decision) is None:
        raise DecisionConflict("decision", _("this decision has no review time"))
    now = timezone.now()
    if next_review_at is not None and next_review_at <= now:
        raise DecisionConflict("next_review_at", _("must be in the future"))
    entry = log_record_append(
        fixture=fixture,
        author=by,
        kind=LogEntry.Kind.DECISION_REVIEW,
        text=note,
        note=f"review of decision #{decision.entry.seq}",
        links=[decision.entry.seq],
        home_only=decision.home_only,
    )
    review = DecisionReview.objects.create(
        decision=decision, entry=entry, by=by, at=now, note=note, next_review_at=next_review_at
    )
    _publish(decision, "reviewed", entry.seq)
    return review


def _stewards_told(fixture: Fixture, by: User, text: str) -> Any:
    """The broadcast to every posted steward (None when nobody is posted yet: the banner and the
    logged decision still stand)."""
    try:
        with transaction.atomic():
            return broadcast_send(fixture=fixture, sent_by=by, script="free", text=text[:500])
    except LogEntryError as refused:
        if refused.field != "recipients":
            raise
        return None


def _radio_switch(
    *,
    fixture: Fixture,
    by: User,
    decision_maker: User,
    down: bool,
    note: str,
    decided_at: datetime | None = None,
    retrospective_reason: str = "",
) -> RadioSwitch:
    if not can_switch_radio(by, fixture):
        raise Forbidden("by", _("the control room switches the radio down or back up"))
    if not can_make_decisions(decision_maker, fixture):
        _commander_role(decision_maker, fixture)  # raises, naming the field
    if radio_is_down(fixture) == down:
        state = _("down") if down else _("up")
        raise DecisionConflict(
            "radio", _("the radio is already marked %(state)s") % {"state": state}
        )
    instructions = fallback_instructions(fixture) if down else ""
    if down:
        parts = DecisionParts(
            decision=_("Radio down: work to the fallback communications plan"),
            rationale=note.strip() or _("The radio link from the control room has failed."),
            powers_policy=_("Match plan, communications: when the radio fails (Green Guide)"),
            information=instructions,
        )
        told = _("Radio down. %(instructions)s") % {"instructions": instructions}
    else:
        parts = DecisionParts(
            decision=_("Radio back up: the fallback communications plan ends"),
            rationale=note.strip() or _("The radio link from the control room works again."),
            powers_policy=_("Match plan, communications"),
        )
        told = _("Radio back up: use the radio again. The fallback ends.")
    decision = _write(
        fixture=fixture,
        loggist=by,
        decision_maker=decision_maker,
        parts=parts,
        decided_at=decided_at,
        retrospective_reason=retrospective_reason,
    )
    switch = RadioSwitch.objects.create(
        fixture=fixture,
        down=down,
        at=decision.decided_at,
        by=by,
        decision=decision,
        broadcast=_stewards_told(fixture, by, told),
        instructions=instructions,
    )
    zone_ids = frozenset(fixture.zones.values_list("zone_id", flat=True))
    publish(
        fixture_id=fixture.pk,
        type=RADIO_STATUS,
        data={
            "down": down,
            "at": clock.iso(switch.at),
            "by": str(by),
            "instructions": instructions,
        },
        # Every screen of the match: the control room, the police, and every steward's phone.
        audience=Audience(zone_ids=zone_ids, user_ids=frozenset(current_posts(fixture))),
    )
    return switch


@transaction.atomic
def radio_down(
    *,
    fixture: Fixture,
    by: User,
    decision_maker: User,
    note: str = "",
    decided_at: datetime | None = None,
    retrospective_reason: str = "",
) -> RadioSwitch:
    """The radio has failed: a logged decision, the plan's fallback instructions broadcast to
    every steward, and a banner on every screen until the radio is switched back up. A switch
    logged after it was made (a replay) gives decided_at and why it is late, as a decision does."""
    return _radio_switch(
        fixture=fixture, by=by, decision_maker=decision_maker, down=True, note=note,
        decided_at=decided_at, retrospective_reason=retrospective_reason,
    )  # fmt: skip


@transaction.atomic
def radio_restore(
    *,
    fixture: Fixture,
    by: User,
    decision_maker: User,
    note: str = "",
    decided_at: datetime | None = None,
    retrospective_reason: str = "",
) -> RadioSwitch:
    """The radio works again: a logged decision, the stewards told, the banner gone."""
    return _radio_switch(
        fixture=fixture, by=by, decision_maker=decision_maker, down=False, note=note,
        decided_at=decided_at, retrospective_reason=retrospective_reason,
    )  # fmt: skip


# --- a major incident declared: its M/ETHANE report ------------------------------------------


def methane_fields(report: MethaneReport) -> dict[str, Any]:
    """The canonical fields of an M/ETHANE report (what its entry's SHA-256 is computed over)."""
    return {
        **{p.key: getattr(report, p.key) for p in METHANE_PARTS},
        "made_by": report.made_by_id,
        "made_by_name": report.made_by_name,
        "made_by_role": report.made_by_role,
        "made_at": _time(report.made_at),
        "corrects": report.corrects.entry.seq if report.corrects else None,
        "correction_reason": report.correction_reason,
        "home_only": report.home_only,
    }


def _methane_texts(parts: Mapping[str, str], base: MethaneReport | None) -> dict[str, str]:
    """Every part's text: as given, else as the report corrected said it."""
    unknown = sorted(set(parts) - {p.key for p in METHANE_PARTS})
    if unknown:
        raise DecisionError(unknown[0], _("no such part of an M/ETHANE report"))
    texts = {}
    for p in METHANE_PARTS:
        given = parts.get(p.key)
        text = getattr(base, p.key) if given is None and base else str(given or "").strip()
        if p.required and not text:
            raise DecisionError(p.key, _("must not be empty"))
        if len(text) > METHANE_MAX:
            raise DecisionError(p.key, too_long(len(text), METHANE_MAX))
        texts[p.key] = text
    return texts


def _may_declare(by: User, fixture: Fixture) -> None:
    if not can_declare_major_incident(by, fixture):
        raise Forbidden(
            "by", _("only the safety officer or the police commander declares a major incident")
        )


def _methane_write(
    *,
    fixture: Fixture,
    by: User,
    texts: dict[str, str],
    corrects: MethaneReport | None = None,
    reason: str = "",
) -> MethaneReport:
    report = MethaneReport(
        fixture=fixture,
        **texts,
        made_by=by,
        made_by_name=str(by),
        made_by_role=sorted(plan_sign_roles(by, fixture))[0],
        made_at=timezone.now(),
        corrects=corrects,
        correction_reason=reason,
    )
    report.sha256 = digest(methane_fields(report))
    said = "; ".join(f"{p.letter}: {texts[p.key]}" for p in METHANE_PARTS if texts[p.key])
    corrected = f"; corrects #{corrects.entry.seq}" if corrects else ""
    entry = log_record_append(
        fixture=fixture,
        author=by,
        kind=LogEntry.Kind.MAJOR_INCIDENT,
        observed_at=report.made_at,
        text=f"M/ETHANE {said}",
        note=f"M/ETHANE sha256 {report.sha256} by {report.made_by_name}{corrected}",
    )
    report.entry = entry
    report.save()
    publish(
        fixture_id=fixture.pk,
        type=MAJOR_INCIDENT,
        data={
            "id": report.pk,
            "seq": entry.seq,
            "action": "corrected" if corrects else "declared",
            "corrects": report.corrects_id,
            "made_by": report.made_by_name,
            "made_at": clock.iso(report.made_at),
        },
        # Everyone working the match: the control room, the police, the away club.
        audience=Audience(),
        chain_seq=entry.seq,
    )
    hooks.methane_reported(report)
    return report


@transaction.atomic
def major_incident_declare(
    *, fixture: Fixture, by: User, parts: Mapping[str, str]
) -> MethaneReport:
    """A commander declares a major incident from the control room: the first message is its
    M/ETHANE report, chained in the match's log, live to every partner working the match, and
    pushed to the commanders (hooks.methane_reported). Once per match: after that, corrected."""
    _may_declare(by, fixture)
    log_chain_lock(fixture)  # two commanders declaring at once: one declares, one is told
    standing = methane_latest(fixture)
    if standing is not None:
        raise DecisionConflict(
            "major_incident",
            _("a major incident is already declared (#%(seq)s): correct its M/ETHANE report")
            % {"seq": standing.entry.seq},
        )
    texts = _methane_texts(parts, None)
    return _methane_write(fixture=fixture, by=by, texts=texts)


@transaction.atomic
def methane_correct(
    *, report: MethaneReport, by: User, parts: Mapping[str, str], reason: str
) -> MethaneReport:
    """A correction: a new report with the parts given changed (the others as they were), that
    strikes the earlier one through, as a decision's amendment does. Only the report as it
    stands is corrected."""
    _may_declare(by, report.fixture)
    reason = reason.strip()
    if not reason:
        raise DecisionError("reason", _("say why the report is corrected"))
    if len(reason) > METHANE_MAX:
        raise DecisionError("reason", too_long(len(reason), METHANE_MAX))
    log_chain_lock(report.fixture)  # two corrections at once: the second is told of the first
    latest = methane_latest(report.fixture)
    if latest is not None and latest.pk != report.pk:
        raise DecisionConflict(
            "report",
            _("#%(report)s is already corrected by #%(correction)s: correct that")
            % {"report": report.entry.seq, "correction": latest.entry.seq},
        )
    texts = _methane_texts(parts, report)
    if all(texts[p.key] == getattr(report, p.key) for p in METHANE_PARTS):
        raise DecisionError("report", _("nothing is changed: correct at least one part"))
    return _methane_write(
        fixture=report.fixture, by=by, texts=texts, corrects=report, reason=reason
    )
