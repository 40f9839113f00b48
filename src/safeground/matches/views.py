from collections import defaultdict

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from safeground.accounts.permissions import (
    access_record_organisation_ids,
    can_assess_risk,
    can_open_control_room,
    can_open_steward_page,
    can_read_plan,
    can_use_register,
    flag_organisation_ids,
    require,
)
from safeground.venues.selectors import ground_plan, grounds_visible_to

from .models import FixtureZone, RiskAssessment
from .policy import PolicyFileError
from .selectors import (
    fixture_for,
    fixture_for_planning,
    fixture_zone_uses,
    fixtures_coming_and_recent,
    risk_assessments,
)
from .services import risk_assess, risk_assessment_current


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
    may_read_plan = can_read_plan(request.user, fixture)
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
            "may_read_plan": may_read_plan,
            "assessment": _assessment(request, fixture) if may_read_plan else None,
        },
    )


def _assessment(request: HttpRequest, fixture: object) -> RiskAssessment | None:
    """The current assessment; None, with the policy's problems shown, if the policy is refused."""
    try:
        return risk_assessment_current(fixture=fixture)  # type: ignore[arg-type]
    except PolicyFileError as error:
        for problem in error.errors:
            messages.error(request, f"Risk policy refused: {problem}")
        return None


@login_required
@require_http_methods(["GET", "POST"])
def fixture_risk(request: HttpRequest, fixture_id: int) -> HttpResponse:
    """The category and every factor behind it; POST assesses again (new history since)."""
    fixture = fixture_for_planning(request.user, fixture_id)
    may_assess = can_assess_risk(request.user, fixture)
    if request.method == "POST":
        require(may_assess)
        try:
            risk_assess(fixture=fixture, by=request.user)  # type: ignore[arg-type]
        except PolicyFileError as error:
            for problem in error.errors:
                messages.error(request, f"Risk policy refused: {problem}")
        return redirect("fixture_risk", fixture.pk)
    return render(
        request,
        "matches/risk.html",
        {
            "fixture": fixture,
            "assessment": _assessment(request, fixture),
            "earlier": list(risk_assessments(fixture)[1:6]),
            "may_assess": may_assess,
        },
    )
