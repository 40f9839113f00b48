from collections import defaultdict

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_http_methods

from safeground.accounts.models import Role
from safeground.accounts.permissions import (
    access_record_organisation_ids,
    can_assess_risk,
    can_edit_plan,
    can_open_control_room,
    can_open_steward_page,
    can_plan_fixtures,
    can_print_seat_codes,
    can_read_briefing,
    can_read_checkpoints,
    can_read_decisions,
    can_read_match_report,
    can_read_plan,
    can_triage_supporter_reports,
    can_use_register,
    can_view_deployment,
    can_work_cases,
    device_organisation_ids,
    flag_organisation_ids,
    plan_sign_roles,
    require,
)
from safeground.venues.selectors import (
    blocks_with_seats,
    ground_for_planning,
    ground_plan,
    grounds_visible_to,
)

from .fixture_fields import FixtureError
from .forms import FixtureForm, fixture_initial
from .hooks import fixture_panels
from .models import Fixture, FixtureZone, RiskAssessment
from .policy import MEASURES, PolicyFileError
from .season_file import SeasonFileError, season_file_parse
from .selectors import (
    fixture_for,
    fixture_for_risk,
    fixture_zone_uses,
    fixtures_coming_and_recent,
    plan_current,
    plan_signatures,
    plan_versions,
    risk_assessments,
)
from .services import (
    PlanChanged,
    PlanError,
    fixture_add,
    fixture_edit,
    fixtures_import,
    plan_generate,
    plan_revise,
    plan_sign,
    risk_assess,
    risk_assessment_current,
)


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
            "may_manage_devices": bool(device_organisation_ids(request.user)),
        },
    )


@login_required
def fixture(request: HttpRequest, fixture_id: int) -> HttpResponse:
    fixture = fixture_for(request.user, fixture_id)
    may_read_plan = can_read_plan(request.user, fixture)
    zones_by_use: dict[str, list[str]] = defaultdict(list)
    for fixture_zone in fixture.zones.all():
        zones_by_use[str(FixtureZone.Use(fixture_zone.use).label)].append(
            fixture_zone.zone.local_name
        )
    return render(
        request,
        "matches/fixture.html",
        {
            "fixture": fixture,
            "plan": ground_plan(fixture.ground, zone_uses=fixture_zone_uses(fixture)),
            "zones_by_use": sorted(zones_by_use.items()),
            "may_open_control_room": can_open_control_room(request.user, fixture),
            "may_read_checkpoints": can_read_checkpoints(request.user, fixture),
            "may_open_steward_page": can_open_steward_page(request.user, fixture),
            "may_plan": can_plan_fixtures(request.user, fixture.ground),
            "may_read_plan": may_read_plan,
            "may_read_report": can_read_match_report(request.user, fixture),
            # Before kick-off there is no match to report on: the page says when there will be.
            "kicked_off": fixture.kickoff <= timezone.now(),
            "may_view_deployment": can_view_deployment(request.user, fixture),
            "may_read_briefing": can_read_briefing(request.user, fixture),
            "may_work_cases": can_work_cases(request.user, fixture),
            "may_read_decisions": can_read_decisions(request.user, fixture),
            "may_triage_supporters": can_triage_supporter_reports(request.user, fixture),
            "seat_code_blocks": (
                blocks_with_seats(fixture.ground)
                if can_print_seat_codes(request.user, fixture.ground)
                else []
            ),
            "assessment": _assessment(request, fixture) if may_read_plan else None,
            "panels": fixture_panels(request.user, fixture),
        },
    )


def _assessment(request: HttpRequest, fixture: object) -> RiskAssessment | None:
    """The current assessment; None, with the policy's problems shown, if the policy is refused."""
    try:
        return risk_assessment_current(fixture=fixture)  # type: ignore[arg-type]
    except PolicyFileError as error:
        for problem in error.errors:
            messages.error(request, _("Risk policy refused: %(problem)s") % {"problem": problem})
        return None


@login_required
@require_http_methods(["GET", "POST"])
def fixture_risk(request: HttpRequest, fixture_id: int) -> HttpResponse:
    """The category and every factor behind it; POST assesses again (new history since)."""
    fixture = fixture_for_risk(request.user, fixture_id)
    may_assess = can_assess_risk(request.user, fixture)
    if request.method == "POST":
        require(may_assess)
        try:
            risk_assess(fixture=fixture, by=request.user)  # type: ignore[arg-type]
        except PolicyFileError as error:
            for problem in error.errors:
                messages.error(
                    request, _("Risk policy refused: %(problem)s") % {"problem": problem}
                )
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


def _plan_change(request: HttpRequest, fixture: Fixture) -> None:
    """The POSTed action: generate, save (the edit form) or sign. Refusals become messages."""
    action = request.POST.get("action", "")
    user = request.user
    try:
        based_on = int(request.POST["version"]) if request.POST.get("version") else None
        if action == "generate":
            require(can_edit_plan(user, fixture))
            plan_generate(fixture=fixture, by=user, based_on=based_on)  # type: ignore[arg-type]
        elif action == "save":
            require(can_edit_plan(user, fixture))
            stewards = {}
            for key in request.POST:
                value = request.POST.get(key, "")
                if key.startswith("stewards-"):
                    try:
                        stewards[key.removeprefix("stewards-")] = int(value)
                    except ValueError:
                        raise PlanError(
                            "stewards", _("'%(value)s' is not a whole number") % {"value": value}
                        ) from None
            first_aiders = request.POST.get("first_aiders", "")
            plan_revise(
                fixture=fixture,
                by=user,  # type: ignore[arg-type]
                based_on=based_on or 0,
                stewards=stewards,
                measures={
                    key.removeprefix("measure-"): request.POST.get(key, "")
                    for key in request.POST
                    if key.startswith("measure-")
                },
                communications={
                    key: request.POST[key] for key in ("primary", "fallback") if key in request.POST
                },
                first_aiders=int(first_aiders) if first_aiders.isdigit() else None,
                note=request.POST.get("note", ""),
            )
        elif action == "sign":
            require(bool(plan_sign_roles(user, fixture)))
            plan_sign(fixture=fixture, by=user, version=based_on or 0)  # type: ignore[arg-type]
        else:
            messages.error(request, _("Unknown action."))
    except (PlanError, PlanChanged, PolicyFileError) as error:
        messages.error(request, error.message)
    except ValueError:
        messages.error(request, _("version: not a number"))


@login_required
@require_http_methods(["GET", "POST"])
def fixture_plan(request: HttpRequest, fixture_id: int) -> HttpResponse:
    """The match plan: its measures, stewards per zone with the working, first aid and
    communications; the safety officer edits it; both signatures on the current version."""
    fixture = fixture_for_risk(request.user, fixture_id)
    if request.method == "POST":
        _plan_change(request, fixture)
        return redirect("fixture_plan", fixture.pk)
    plan = plan_current(fixture)
    sign_roles = plan_sign_roles(request.user, fixture)
    signatures = plan_signatures(plan) if plan else {}
    return render(
        request,
        "matches/plan.html",
        {
            "fixture": fixture,
            "plan": plan,
            "measure_names": dict(MEASURES),
            "use_names": dict(FixtureZone.Use.choices),
            "signatures": [(Role(role).label, sign_off) for role, sign_off in signatures.items()],
            "signed_off": bool(plan) and all(signatures.values()),
            "may_edit": can_edit_plan(request.user, fixture),
            "may_sign": bool(plan) and any(signatures.get(role) is None for role in sign_roles),
            "versions": list(plan_versions(fixture)),
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
        raise Http404(_("No such fixture at this ground."))
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


class SeasonFileForm(forms.Form):
    file = forms.FileField(label=gettext_lazy("The season's fixtures (CSV)"))


@login_required
def fixtures_season_import(request: HttpRequest, code: str) -> HttpResponse:
    """The safety officer imports a season's fixtures: the file `import-fixtures` reads, checked
    whole; every bad line shown and nothing written unless all is good."""
    ground = ground_for_planning(request.user, code)
    form = SeasonFileForm(request.POST or None, request.FILES or None)
    errors: list[str] = []
    made: list[Fixture] = []
    if request.method == "POST" and form.is_valid():
        try:
            fixtures = season_file_parse(ground=ground, data=form.cleaned_data["file"].read())
        except SeasonFileError as error:
            errors = error.errors
        else:
            made = fixtures_import(ground=ground, fixtures=fixtures, by=request.user)  # type: ignore[arg-type]
    return render(
        request,
        "matches/season_import.html",
        {"ground": ground, "form": form, "errors": errors, "made": made},
        status=400 if errors or form.errors else 200,
    )
