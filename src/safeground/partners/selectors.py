"""Reads of what partners were told: each read checks who may see it (the sharing rules,
accounts.permissions) in the same function."""

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import Q, QuerySet
from django.http import Http404
from django.utils.translation import gettext as _

from safeground.accounts.models import Organisation
from safeground.accounts.permissions import (
    can_read_partner_alerts,
    organisations_told,
    partner_alert_organisation_ids,
)
from safeground.matches.models import Fixture, FixtureShare

from .models import PartnerAlert, PushDelivery

FEED_MOST = 200  # a poll's answer: the newest this many


def feed(user: Any, *, since: datetime | None = None) -> QuerySet[PartnerAlert]:
    """The alerts the user's organisations may see, newest first: every alert of their home
    fixtures, and the alerts not home-only of the fixtures shared with them. `since`: sent at
    or after it (a poller keeps the newest `sent` it read, and drops an identifier it has)."""
    orgs = partner_alert_organisation_ids(user)
    shared = FixtureShare.objects.filter(organisation_id__in=orgs).values("fixture_id")
    alerts = PartnerAlert.objects.filter(
        Q(fixture__ground__organisation_id__in=orgs) | Q(home_only=False, fixture_id__in=shared)
    )
    if since is not None:
        alerts = alerts.filter(sent_at__gte=since)
    return alerts.defer("xml").order_by("-sent_at", "-pk")[:FEED_MOST]


def alert_read(user: Any, identifier: str) -> PartnerAlert:
    """One alert, if the user may see it; else 404, the same as for an alert that is not there
    (a partner learns nothing of a match not shared with it)."""
    alert = (
        PartnerAlert.objects.select_related("fixture__ground")
        .prefetch_related("fixture__shares")
        .filter(identifier=identifier)
        .first()
    )
    if alert is None or not can_read_partner_alerts(user, alert.fixture, home_only=alert.home_only):
        raise Http404(_("No such alert."))
    return alert


@dataclass(frozen=True, order=True)
class Recipient:
    name: str
    push: str  # "" (it polls), or how the push to its endpoint went, in the reader's words


@dataclass(frozen=True)
class Told:
    alert: PartnerAlert
    organisations: list[Recipient]


def _push_state(delivery: PushDelivery | None) -> str:
    if delivery is None:
        return ""
    if delivery.delivered_at:
        return _("pushed")
    return _("push not delivered yet (%(attempts)s tries)") % {"attempts": delivery.attempts}


def fixture_told(user: Any, fixture: Fixture) -> list[Told]:
    """What partners were told of the match, newest first, with whom each went to and how each
    push went; the home-only ones only to the home club's staff."""
    alerts = [
        alert
        for alert in fixture.partner_alerts.defer("xml").order_by("-sent_at", "-pk")
        if can_read_partner_alerts(user, fixture, home_only=alert.home_only)
    ]
    names = dict(
        Organisation.objects.filter(
            pk__in=organisations_told(fixture, home_only=False)
        ).values_list("pk", "name")
    )
    pushes = {
        (delivery.alert_id, delivery.organisation_id): delivery
        for delivery in PushDelivery.objects.filter(alert__in=alerts)
    }
    return [
        Told(
            alert,
            sorted(
                Recipient(names[pk], _push_state(pushes.get((alert.pk, pk))))
                for pk in organisations_told(fixture, home_only=alert.home_only)
            ),
        )
        for alert in alerts
    ]
