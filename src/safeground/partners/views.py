"""The page of what partner agencies were told of a match, and its panel on the fixture's page."""

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

from safeground.accounts.permissions import can_read_partner_alerts, require
from safeground.matches.models import Fixture
from safeground.matches.selectors import fixture_for

from .selectors import fixture_told


def fixture_panel_for(user: Any, fixture: Fixture) -> str | None:
    """The fixture page's link to what partners were told (matches.hooks.fixture_panels)."""
    if not can_read_partner_alerts(user, fixture):
        return None
    return reverse("partners_panel", args=[fixture.pk])


def _fixture(request: HttpRequest, fixture_id: int) -> Fixture:
    fixture = fixture_for(request.user, fixture_id)
    require(can_read_partner_alerts(request.user, fixture))
    return fixture


@login_required
def partners_told(request: HttpRequest, fixture_id: int) -> HttpResponse:
    fixture = _fixture(request, fixture_id)
    return render(
        request,
        "partners/told.html",
        {"fixture": fixture, "rows": fixture_told(request.user, fixture)},
    )


@login_required
def partners_panel(request: HttpRequest, fixture_id: int) -> HttpResponse:
    """An htmx fragment of the fixture's page: how many alerts went out, and the link."""
    fixture = _fixture(request, fixture_id)
    return render(
        request,
        "partners/_panel.html",
        {"fixture": fixture, "told": len(fixture_told(request.user, fixture))},
    )
