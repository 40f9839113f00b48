"""Writes for closing a stand and evacuating it, and reopening it once all clear (issue 41).

Each is one transaction: the closure row, the commander's decision in the log (decision_record),
the broadcast to the stewards posted at the stand's blocks (so their acknowledgements are
counted), and the `stand.closure` live event, on commit. The stand's row is locked first, so two
commanders closing the same stand at once close it once (the second is told it is closed).
"""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from safeground import clock
from safeground.accounts.models import User
from safeground.accounts.permissions import can_close_stand
from safeground.errors import Forbidden, too_long
from safeground.incidents.broadcasting import broadcast_send
from safeground.incidents.models import Broadcast
from safeground.live.catalogue import STAND_CLOSURE
from safeground.live.events import Audience, publish
from safeground.matches.models import Fixture
from safeground.venues.models import Stand

from .evacuation import closure_current, stand_blocks, stand_exits, stand_steward_posts
from .models import Decision, StandClosure
from .services import (
    DecisionConflict,
    DecisionError,
    DecisionNotFound,
    DecisionParts,
    decision_record,
)

MAX_REASON = 1000


def _reason(reason: str) -> str:
    reason = reason.strip()
    if not reason:
        raise DecisionError("reason", _("must not be empty: say why"))
    if len(reason) > MAX_REASON:
        raise DecisionError("reason", too_long(len(reason), MAX_REASON))
    return reason


def _checked(fixture: Fixture, stand: Stand, by: User, *, closing: bool) -> None:
    if not can_close_stand(by, fixture):
        raise Forbidden(
            "by", _("only the safety officer or the police commander closes or reopens a stand")
        )
    if stand.ground_id != fixture.ground_id:
        raise DecisionNotFound(
            "stand", _("no such stand at %(ground)s") % {"ground": fixture.ground}
        )
    # The stand's row: nothing else locks it, so no lock order to keep with the log's chain.
    Stand.objects.select_for_update().filter(pk=stand.pk).first()
    current = closure_current(fixture, stand)
    closed = bool(current and current.closed)
    if closing and closed:
        raise DecisionConflict(
            "stand", _("%(stand)s is already closed") % {"stand": stand.local_name}
        )
    if not closing and not closed:
        raise DecisionConflict("stand", _("%(stand)s is not closed") % {"stand": stand.local_name})


def _publish(closure: StandClosure) -> None:
    publish(
        fixture_id=closure.fixture_id,
        type=STAND_CLOSURE,
        data={
            "stand": closure.stand.code,
            "name": closure.stand.name,
            "closed": closure.closed,
            "at": clock.iso(closure.at),
            "by": str(closure.by),
            "reason": closure.reason,
            "seq": closure.decision.entry.seq,
            "broadcast": closure.broadcast_id,
        },
        # The log's rule for an entry with no zone: everyone working the match but stewards
        # (they hear it by the broadcast).
        audience=Audience(),
    )


def _tell_stewards(
    fixture: Fixture, stand: Stand, by: User, script: str, text: str
) -> Broadcast | None:
    """The broadcast to the stewards posted at the stand's blocks (None: nobody is posted there;
    the closure and its decision still stand, and the page says so)."""
    recipients = stand_steward_posts(fixture, stand)
    if not recipients:
        return None
    return broadcast_send(
        fixture=fixture, sent_by=by, script=script, text=_fit(text), recipient_ids=recipients
    )


def _fit(text: str, most: int = 500) -> str:
    """A broadcast's words within its limit: a big stand's list of exits cut after a whole
    name, with an ellipsis, not in the middle of one."""
    if len(text) <= most:
        return text
    return text[: most - 1].rsplit(", ", 1)[0] + "…"


@transaction.atomic
def stand_close(*, fixture: Fixture, stand: Stand, by: User, reason: str) -> StandClosure:
    """A commander closes the stand and orders it evacuated: logged as their decision (with the
    exits and the evacuation time), and broadcast to the stewards of its blocks."""
    reason = _reason(reason)
    _checked(fixture, stand, by, closing=True)
    exits = ", ".join(exit_.name for exit_ in stand_exits(stand)) or _("none in the venue file")
    blocks = ", ".join(block.code for block in stand_blocks(stand))
    said = {"stand": stand.local_name}
    decision = decision_record(
        fixture=fixture,
        loggist=by,
        decision_maker=by,
        parts=DecisionParts(
            decision=_("Close %(stand)s and evacuate it") % said,
            rationale=reason,
            information=_("Blocks: %(blocks)s. Exits: %(exits)s. Evacuation time: %(minutes)s min.")
            % {
                "blocks": blocks,
                "exits": exits,
                "minutes": f"{fixture.ground.evacuation_minutes:g}",
            },
            powers_policy=_("Ground safety: emergency evacuation (Green Guide)"),
        ),
    )
    broadcast = _tell_stewards(
        fixture,
        stand,
        by,
        Broadcast.Script.EVACUATE,
        _("Evacuate %(stand)s now (blocks %(blocks)s) by exits: %(exits)s.")
        % {"stand": stand.local_name, "blocks": blocks, "exits": exits},
    )
    return _kept(fixture, stand, by, reason, decision, broadcast, closed=True)


def _kept(
    fixture: Fixture,
    stand: Stand,
    by: User,
    reason: str,
    decision: Decision,
    broadcast: Broadcast | None,
    *,
    closed: bool,
) -> StandClosure:
    """The closure (or reopening) kept beside its decision and broadcast, and published."""
    closure = StandClosure.objects.create(
        fixture=fixture,
        stand=stand,
        closed=closed,
        at=timezone.now(),
        by=by,
        reason=reason,
        decision=decision,
        broadcast=broadcast,
    )
    _publish(closure)
    return closure


@transaction.atomic
def stand_reopen(*, fixture: Fixture, stand: Stand, by: User, reason: str) -> StandClosure:
    """All clear: the commander reopens the stand, logged as their decision and broadcast to the
    stewards of its blocks."""
    reason = _reason(reason)
    _checked(fixture, stand, by, closing=False)
    said = {"stand": stand.local_name}
    decision = decision_record(
        fixture=fixture,
        loggist=by,
        decision_maker=by,
        parts=DecisionParts(
            decision=_("All clear: reopen %(stand)s") % said,
            rationale=reason,
            powers_policy=_("Ground safety: emergency evacuation (Green Guide)"),
        ),
    )
    broadcast = _tell_stewards(
        fixture,
        stand,
        by,
        Broadcast.Script.ALL_CLEAR,
        _("All clear: %(stand)s is open again.") % said,
    )
    return _kept(fixture, stand, by, reason, decision, broadcast, closed=False)
