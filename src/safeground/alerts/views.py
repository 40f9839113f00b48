"""Push alerts' fragments in the log's pages: the steward's "alerts on this phone" control,
and the control room's broadcast delivery (per recipient) and its alarm for an urgent broadcast
not acknowledged in time."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

from safeground.accounts.permissions import can_open_steward_page, can_view_deployment, require
from safeground.incidents.panels import Panel
from safeground.live.catalogue import ALERT_OVERDUE, BROADCAST, BROADCAST_ACK
from safeground.matches.models import Fixture
from safeground.matches.selectors import fixture_for

from . import vapid
from .selectors import phone_subscribed, recent_deliveries

REFRESH_ON = (BROADCAST, BROADCAST_ACK, ALERT_OVERDUE)


def steward_panel_for(user: Any, fixture: Fixture) -> Panel | None:
    if not can_open_steward_page(user, fixture):
        return None
    return Panel(reverse("alerts_phone_panel", args=[fixture.pk]))


def control_room_panel_for(user: Any, fixture: Fixture) -> Panel | None:
    if not can_view_deployment(user, fixture):
        return None
    return Panel(reverse("alerts_delivery_panel", args=[fixture.pk]), REFRESH_ON)


def control_room_alarm_for(user: Any, fixture: Fixture) -> Panel | None:
    if not can_view_deployment(user, fixture):
        return None
    return Panel(reverse("alerts_overdue_panel", args=[fixture.pk]), REFRESH_ON, top=True)


def _fixture(request: HttpRequest, fixture_id: int, allowed: Any) -> Fixture:
    fixture = fixture_for(request.user, fixture_id)
    require(allowed(request.user, fixture))
    return fixture


@login_required
def alerts_phone_panel(request: HttpRequest, fixture_id: int) -> HttpResponse:
    """Loaded into the steward page: whether this phone takes alerts, and a switch. The page's
    script (alerts/steward-alerts-1.js) subscribes it on check-in or on the switch."""
    fixture = _fixture(request, fixture_id, can_open_steward_page)
    return render(
        request,
        "alerts/phone_panel.html",
        {
            "fixture": fixture,
            "subscribed": phone_subscribed(request.user),  # type: ignore[arg-type]
            "public_key": vapid.public_key(),
            "subscribe_url": reverse("api:alert_subscribe"),
            "unsubscribe_url": reverse("api:alert_unsubscribe"),
            "seen_url": reverse("api:broadcast_seen", args=[fixture.pk, 0]),
        },
    )


@login_required
def alerts_delivery_panel(request: HttpRequest, fixture_id: int) -> HttpResponse:
    """Loaded into the control room: each recent broadcast, recipient by recipient."""
    fixture = _fixture(request, fixture_id, can_view_deployment)
    return render(
        request,
        "alerts/delivery_panel.html",
        {"fixture": fixture, "deliveries": recent_deliveries(fixture)},
    )


@login_required
def alerts_overdue_panel(request: HttpRequest, fixture_id: int) -> HttpResponse:
    """Above the control room's log: urgent broadcasts raised, not acknowledged by everyone."""
    fixture = _fixture(request, fixture_id, can_view_deployment)
    overdue = [d for d in recent_deliveries(fixture) if d.overdue]
    return render(request, "alerts/overdue_panel.html", {"fixture": fixture, "overdue": overdue})
