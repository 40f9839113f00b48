from collections import defaultdict

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from safeground.accounts.permissions import (
    access_record_organisation_ids,
    can_open_control_room,
    can_open_steward_page,
    can_use_register,
    flag_organisation_ids,
)
from safeground.venues.selectors import ground_plan, grounds_visible_to

from .models import FixtureZone
from .selectors import fixture_for, fixture_zone_uses, fixtures_coming_and_recent


@login_required
def home(request: HttpRequest) -> HttpResponse:
    coming, earlier = fixtures_coming_and_recent(request.user)
    roles = request.user.memberships.select_related("organisation")  # type: ignore[union-attr]
    return render(
        request,
        "matches/home.html",
        {
            "coming": coming,
            "earlier": earlier,
            "grounds": grounds_visible_to(request.user),
            "roles": roles,
            "may_use_register": can_use_register(request.user),
            "may_review_flags": bool(flag_organisation_ids(request.user)),
            "may_read_access_records": bool(access_record_organisation_ids(request.user)),
        },
    )


@login_required
def fixture(request: HttpRequest, fixture_id: int) -> HttpResponse:
    fixture = fixture_for(request.user, fixture_id)
    zones_by_use: dict[str, list[str]] = defaultdict(list)
    for fixture_zone in fixture.zones.all():
        zones_by_use[FixtureZone.Use(fixture_zone.use).label].append(fixture_zone.zone.name)
    return render(
        request,
        "matches/fixture.html",
        {
            "fixture": fixture,
            "plan": ground_plan(fixture.ground, zone_uses=fixture_zone_uses(fixture)),
            "zones_by_use": sorted(zones_by_use.items()),
            "may_open_control_room": can_open_control_room(request.user, fixture),
            "may_open_steward_page": can_open_steward_page(request.user, fixture),
        },
    )
