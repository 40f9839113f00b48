"""A steward's push subscription is the address of their phone: the daily retention job drops it
once it has gone unused for SAFEGROUND_PUSH_RETENTION_DAYS; what the alerts record stays."""

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.utils import timezone

from safeground.alerts.models import PushSubscription
from safeground.privacy.services import retention_apply

pytestmark = pytest.mark.django_db
DAYS = 7


def phone(user, name: str, *, saved_days_ago: int, ok_days_ago: int | None = None):
    made = PushSubscription.objects.create(
        user=user,
        endpoint=f"http://127.0.0.1:9/push/{name}",  # the tests' push service host
        p256dh="B" + "A" * 86,
        auth="A" * 22,
    )
    now = timezone.now()
    PushSubscription.objects.filter(pk=made.pk).update(  # as if made (and taken) back then
        saved_at=now - timedelta(days=saved_days_ago),
        last_ok_at=None if ok_days_ago is None else now - timedelta(days=ok_days_ago),
    )
    return made


def test_a_subscription_unused_past_the_period_is_dropped_and_one_in_use_kept(
    cast, settings
) -> None:
    settings.SAFEGROUND_PUSH_RETENTION_DAYS = DAYS
    steward = cast["steward"]
    stale = phone(steward, "stale", saved_days_ago=DAYS + 2, ok_days_ago=DAYS + 1)
    never_taken = phone(steward, "never-taken", saved_days_ago=DAYS + 2)
    given_again = phone(steward, "given-again", saved_days_ago=1)
    pushed_lately = phone(steward, "pushed-lately", saved_days_ago=DAYS + 2, ok_days_ago=2)

    report = retention_apply()

    [step] = [s for s in report.steps if s.what == "push subscriptions"]
    assert (step.erased, step.held, step.days) == (2, 0, DAYS)
    kept = set(PushSubscription.objects.values_list("pk", flat=True))
    assert kept == {given_again.pk, pushed_lately.pk}
    assert stale.pk not in kept and never_taken.pk not in kept


def test_the_phone_giving_its_subscription_again_counts_as_use(cast, settings) -> None:
    from safeground.alerts.services import subscription_save

    settings.SAFEGROUND_PUSH_RETENTION_DAYS = DAYS
    old = phone(cast["steward"], "again", saved_days_ago=DAYS + 2)
    subscription_save(user=cast["steward"], endpoint=old.endpoint, p256dh=old.p256dh, auth=old.auth)
    retention_apply()
    assert PushSubscription.objects.filter(pk=old.pk).exists()


def test_the_command_names_the_step(cast, settings) -> None:
    settings.SAFEGROUND_PUSH_RETENTION_DAYS = DAYS
    phone(cast["steward"], "old", saved_days_ago=DAYS + 2)
    out = StringIO()
    call_command("apply_retention", stdout=out)
    assert f"Retention ({DAYS} days after its last use): 1 push subscriptions erased" in (
        out.getvalue()
    )
