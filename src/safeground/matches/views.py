from collections import defaultdict

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from safeground.accounts.permissions import (
    access_record_organisation_ids,
    can_open_control_room,
    can_open_steward_page,
    can_plan_fixtures,
    can_use_register,
    flag_organisation_ids,
    require,
)
from safeground.venues.selectors import ground_for_planning, ground_plan, grounds_visible_to

from .fixture_fields import FixtureError
from .forms import FixtureForm, fixture_initial
from .models import FixtureZone
from .selectors import fixture_for, fixture_zone_uses, fixtures_coming_and_recent
from .services import fixture_add, fixture_edit


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
            "may_plan": can_plan_fixtures(request.user, fixture.ground),
        },
    )


@login_required
def fixture_new(request: HttpRequest, code: str) -> HttpResponse:
    """The safety officer adds a fixture at the ground."""
    ground = ground_for_planning(request.user, code)
    form = FixtureForm(request.POST or None, ground=ground)
    if request.method == "POST" and form.is_valid() and form.checked is not None:
        try:
            made = fixture_add(ground=ground, fields=form.checked, by=request.user)  # type: ignore[arg-type]
        except FixtureError as error:
            form.add_error(error.field if error.field in form.fields else None, error.message)
        else:
            return redirect("fixture", made.pk)
    return render(
        request, "matches/fixture_form.html", {"form": form, "ground": ground, "fixture": None}
    )


@login_required
def fixture_change(request: HttpRequest, code: str, fixture_id: int) -> HttpResponse:
    """The safety officer edits a fixture: opponent, kick-off, layout, allocation, shares."""
    fixture = fixture_for(request.user, fixture_id)
    if fixture.ground.code != code:
        raise Http404("No such fixture at this ground.")
    require(can_plan_fixtures(request.user, fixture.ground))
    form = FixtureForm(
        request.POST or None,
        ground=fixture.ground,
        keep_zones=fixture.layout_id is None,
        initial=fixture_initial(fixture),
    )
    if request.method == "POST" and form.is_valid() and form.checked is not None:
        try:
            fixture_edit(fixture=fixture, fields=form.checked, by=request.user)  # type: ignore[arg-type]
        except FixtureError as error:
            form.add_error(error.field if error.field in form.fields else None, error.message)
        else:
            return redirect("fixture", fixture.pk)
    return render(
        request,
        "matches/fixture_form.html",
        {"form": form, "ground": fixture.ground, "fixture": fixture},
    )
