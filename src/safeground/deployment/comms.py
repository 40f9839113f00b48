"""The communications check among the pre-match checks: a test alert, through the log's
broadcasts (so every way a broadcast reaches a phone reaches it too), to every steward checked
in, and who acknowledged it. Critical: the plan is not ready until every one of them has, unless
the safety officer overrides with a reason (services.plan_mark_ready)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from safeground.accounts.models import User
from safeground.accounts.permissions import can_prepare_checks
from safeground.errors import Forbidden, SafegroundError
from safeground.incidents.broadcasting import broadcast_send
from safeground.incidents.selectors import current_posts
from safeground.matches.models import Fixture

from .models import CheckIn, CommsCheck

TEST_ALERT = "Communications check: this is a test alert. Acknowledge it now."


class NobodyCheckedIn(SafegroundError):
    """No steward has checked in yet: the test alert has no one to reach (409)."""

    status = 409  # the code stays the base class's, "invalid"


@dataclass(frozen=True)
class Recipient:
    username: str
    name: str
    acked_at: datetime | None


@dataclass(frozen=True)
class CommsState:
    check: CommsCheck | None
    recipients: list[Recipient]

    @property
    def acknowledged(self) -> int:
        return sum(r.acked_at is not None for r in self.recipients)

    @property
    def passed(self) -> bool:
        return self.check is not None and self.acknowledged == len(self.recipients)

    def summary(self) -> dict[str, Any]:
        """As a critical check's summary (selectors.CheckState.summary), for the ready mark."""
        if self.check is None:
            state = "not done"
        else:
            state = f"{self.acknowledged} of {len(self.recipients)} acknowledged"
        return {
            "check": None,
            "name": _("Communications check"),
            "place": _("every steward checked in"),
            "state": state,
        }


def checked_in_stewards(fixture: Fixture) -> set[int]:
    """Stewards checked in at their current post."""
    posts = current_posts(fixture)
    return set(
        CheckIn.objects.filter(
            fixture=fixture, post__in=[p.pk for p in posts.values()]
        ).values_list("steward_id", flat=True)
    )


@transaction.atomic
def comms_check_send(*, fixture: Fixture, by: User) -> CommsCheck:
    """The test alert to the stewards checked in now (every posted steward's phone gets it;
    those checked in must acknowledge it)."""
    if not can_prepare_checks(by, fixture):
        raise Forbidden("by", _("the control room sends the communications check"))
    expected = checked_in_stewards(fixture)
    if not expected:
        raise NobodyCheckedIn(
            "stewards",
            _("no steward has checked in yet: the test alert needs someone to reach"),
        )
    broadcast = broadcast_send(fixture=fixture, sent_by=by, script="free", text=_(TEST_ALERT))
    return CommsCheck.objects.create(
        fixture=fixture,
        broadcast=broadcast,
        by=by,
        at=timezone.now(),
        expected_ids=sorted(expected),
    )


def comms_state(fixture: Fixture) -> CommsState:
    """The latest communications check and, for each steward it expected, when they
    acknowledged it."""
    check = (
        CommsCheck.objects.filter(fixture=fixture)
        .select_related("broadcast")
        .order_by("-at", "-pk")
        .first()
    )
    if check is None:
        return CommsState(None, [])
    acks = dict(check.broadcast.acks.values_list("user_id", "acked_at"))
    people = {u.pk: u for u in User.objects.filter(pk__in=check.expected_ids)}
    recipients = [
        Recipient(people[i].username, str(people[i]), acks.get(i))
        for i in check.expected_ids
        if i in people
    ]
    return CommsState(check, sorted(recipients, key=lambda r: r.name))
