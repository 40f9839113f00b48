"""Deployment pages: the board (who is where, checked in or not, the checks, ready), the
steward's phone panel and the control room's panel (htmx fragments loaded into the log's pages),
and the briefing (HTML and PDF)."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404, HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext, ngettext

from safeground.accounts.models import User
from safeground.accounts.permissions import (
    can_assign_posts,
    can_check_in,
    can_mark_plan_ready,
    can_prepare_checks,
    can_read_briefing,
    can_send_check_back,
    can_view_deployment,
    require,
)
from safeground.errors import SafegroundError, erased_by_retention
from safeground.incidents.panels import Panel
from safeground.incidents.posts import steward_post_assign
from safeground.incidents.selectors import steward_post
from safeground.live.catalogue import CHECK_RESULT, STEWARD_CHECKIN, STEWARD_POST
from safeground.matches.models import Fixture
from safeground.matches.selectors import fixture_for

from . import briefing as briefing_data
from .comms import comms_check_send, comms_state
from .models import CheckResult, MatchCheck
from .selectors import check_in_for, checks_at_post, deployment_board
from .services import (
    DeploymentError,
    check_record,
    check_send_back,
    checks_prepare,
    plan_mark_ready,
    steward_check_in,
)

REFRESH_ON = (STEWARD_POST, STEWARD_CHECKIN, CHECK_RESULT)


def steward_panel_for(user: Any, fixture: Fixture) -> Panel | None:
    if not can_check_in(user, fixture):
        return None
    return Panel(reverse("deployment_steward_panel", args=[fixture.pk]), REFRESH_ON)


def control_room_panel_for(user: Any, fixture: Fixture) -> Panel | None:
    """The home club's staff get who is where and the checks, live; others working the match
    (the police) the briefing's links only: deployment's events are the home club's."""
    url = reverse("deployment_control_panel", args=[fixture.pk])
    if can_view_deployment(user, fixture):
        return Panel(url, REFRESH_ON)
    if can_read_briefing(user, fixture):
        return Panel(url)
    return None


def _fixture(request: HttpRequest, fixture_id: int, allowed: Any) -> Fixture:
    """The fixture, if the user may see it and `allowed(user, fixture)`; 403 otherwise."""
    fixture = fixture_for(request.user, fixture_id)
    require(allowed(request.user, fixture))
    return fixture


def _user(request: HttpRequest) -> User:
    assert isinstance(request.user, User)
    return request.user


def _refused(request: HttpRequest, error: SafegroundError) -> None:
    messages.error(request, f"{error.field}: {error.message}" if error.field else error.message)


# --- the board ----------------------------------------------------------------------------------


@login_required
def deployment(request: HttpRequest, fixture_id: int) -> HttpResponse:
    """Who is where and who has not checked in, the plan's stewards per zone beside those
    posted, the checks, and marking the plan ready."""
    fixture = _fixture(request, fixture_id, can_view_deployment)
    user = request.user
    return render(
        request,
        "deployment/deployment.html",
        {
            "fixture": fixture,
            "board": deployment_board(fixture),
            "places": _places(fixture),
            "may_assign": can_assign_posts(user, fixture),
            "may_prepare": can_prepare_checks(user, fixture),
            "may_send_back": can_send_check_back(user, fixture),
            "may_mark_ready": can_mark_plan_ready(user, fixture),
            "may_read_briefing": can_read_briefing(user, fixture),
            "comms": comms_state(fixture),
        },
    )


def _places(fixture: Fixture) -> list[tuple[str, str]]:
    """(value, label) for the post form: the match's zones, then gates, then concourses."""
    zones = [
        (f"zone:{fz.zone.code}", f"{fz.zone.local_name} ({fz.get_use_display().lower()})")
        for fz in fixture.zones.select_related("zone").order_by("use", "zone__code")
    ]
    gates = [(f"gate:{g.code}", g.name) for g in fixture.ground.gates.order_by("code")]
    concourses = [(f"concourse:{c.code}", c.name) for c in fixture.ground.concourses.all()]
    return zones + gates + concourses


def _post_only(request: HttpRequest) -> HttpResponse | None:
    return None if request.method == "POST" else HttpResponseNotAllowed(["POST"])


@login_required
def deployment_post(request: HttpRequest, fixture_id: int) -> HttpResponse:
    """Post a steward to a zone, gate or concourse (the log's service: it decides what the
    steward sees live)."""
    fixture = _fixture(request, fixture_id, can_assign_posts)
    if refused := _post_only(request):
        return refused
    kind, _, code = request.POST.get("place", "").partition(":")
    steward = User.objects.filter(username=request.POST.get("steward", "")).first()
    try:
        if steward is None:
            raise DeploymentError("steward", gettext("choose a steward"))
        if kind not in ("zone", "gate", "concourse"):
            raise DeploymentError("place", gettext("choose a zone, gate or concourse"))
        steward_post_assign(
            fixture=fixture, steward=steward, assigned_by=_user(request), **{kind: code}
        )
    except SafegroundError as error:
        _refused(request, error)
    return redirect("deployment", fixture.pk)


@login_required
def deployment_checks_prepare(request: HttpRequest, fixture_id: int) -> HttpResponse:
    fixture = _fixture(request, fixture_id, can_prepare_checks)
    if refused := _post_only(request):
        return refused
    try:
        made = checks_prepare(fixture=fixture)
    except SafegroundError as error:
        _refused(request, error)
    else:
        messages.info(
            request,
            ngettext(
                "%(n)s check added from the ground's checklist.",
                "%(n)s checks added from the ground's checklist.",
                len(made),
            )
            % {"n": len(made)},
        )
    return redirect("deployment", fixture.pk)


@login_required
def deployment_comms_check(request: HttpRequest, fixture_id: int) -> HttpResponse:
    """Send the communications check's test alert to every steward checked in."""
    fixture = _fixture(request, fixture_id, can_prepare_checks)
    if refused := _post_only(request):
        return refused
    try:
        comms_check_send(fixture=fixture, by=_user(request))
    except SafegroundError as error:
        _refused(request, error)
    return redirect("deployment", fixture.pk)


@login_required
def deployment_check_send_back(
    request: HttpRequest, fixture_id: int, check_id: int
) -> HttpResponse:
    fixture = _fixture(request, fixture_id, can_send_check_back)
    check = get_object_or_404(MatchCheck, fixture=fixture, pk=check_id)
    if refused := _post_only(request):
        return refused
    try:
        check_send_back(check=check, by=_user(request), note=request.POST.get("note", ""))
    except SafegroundError as error:
        _refused(request, error)
    return redirect("deployment", fixture.pk)


@login_required
def deployment_ready(request: HttpRequest, fixture_id: int) -> HttpResponse:
    fixture = _fixture(request, fixture_id, can_mark_plan_ready)
    if refused := _post_only(request):
        return refused
    try:
        plan_mark_ready(
            fixture=fixture,
            by=_user(request),
            override_reason=request.POST.get("override_reason", ""),
        )
    except SafegroundError as error:
        _refused(request, error)
    return redirect("deployment", fixture.pk)


@login_required
def control_room_panel(request: HttpRequest, fixture_id: int) -> HttpResponse:
    """The control room's panel: who is where, who has not checked in, the checks' completion;
    for the police, the briefing's links."""
    fixture = fixture_for(request.user, fixture_id)
    if not can_view_deployment(request.user, fixture):
        require(can_read_briefing(request.user, fixture))
        return render(request, "deployment/briefing_links.html", {"fixture": fixture})
    return render(
        request,
        "deployment/control_room_panel.html",
        {"fixture": fixture, "board": deployment_board(fixture)},
    )


@login_required
def check_photo(request: HttpRequest, fixture_id: int, result_id: int) -> FileResponse:
    """A check's photo, kept as taken (its SHA-256 is on the result): for the board's readers,
    and for the person who took it."""
    fixture = fixture_for(request.user, fixture_id)
    result = get_object_or_404(CheckResult, match_check__fixture=fixture, pk=result_id)
    require(can_view_deployment(request.user, fixture) or result.by_id == request.user.pk)
    if result.photo_erased_at is not None:
        raise Http404(
            erased_by_retention(gettext("This photo"), result.photo_erased_at, result.photo_sha256)
            + "."
        )
    if not result.photo:
        raise Http404(gettext("This result has no photo."))
    response = FileResponse(result.photo.open("rb"), content_type=result.photo_type)
    response["Cache-Control"] = "private, max-age=3600"  # a stored photo never changes
    return response


# --- the steward's phone ------------------------------------------------------------------------


def _steward_panel(request: HttpRequest, fixture: Fixture, error: str = "") -> HttpResponse:
    post = steward_post(fixture, request.user)
    return render(
        request,
        "deployment/steward_panel.html",
        {
            "fixture": fixture,
            "post": post,
            "check_in": check_in_for(post),
            "checks": checks_at_post(fixture, post),
            "summary": briefing_data.steward_summary(fixture),
            "error": error,
        },
    )


@login_required
def steward_panel(request: HttpRequest, fixture_id: int) -> HttpResponse:
    """Loaded into the steward page: the post, the briefing summary, check-in and the checks."""
    return _steward_panel(request, _fixture(request, fixture_id, can_check_in))


@login_required
def steward_check_in_view(request: HttpRequest, fixture_id: int) -> HttpResponse:
    fixture = _fixture(request, fixture_id, can_check_in)
    if refused := _post_only(request):
        return refused
    try:
        steward_check_in(fixture=fixture, steward=_user(request))
    except SafegroundError as error:
        return _steward_panel(request, fixture, error.message)
    return _steward_panel(request, fixture)


@login_required
def steward_check_record(request: HttpRequest, fixture_id: int, check_id: int) -> HttpResponse:
    fixture = _fixture(request, fixture_id, can_check_in)
    check = get_object_or_404(MatchCheck, fixture=fixture, pk=check_id)
    if refused := _post_only(request):
        return refused
    try:
        check_record(
            check=check,
            by=_user(request),
            outcome=request.POST.get("outcome", ""),
            note=request.POST.get("note", ""),
            photo=request.FILES.get("photo"),
        )
    except SafegroundError as error:
        return _steward_panel(request, fixture, f"{check.name}: {error.message}")
    return _steward_panel(request, fixture)


# --- the briefing -------------------------------------------------------------------------------


@login_required
def briefing(request: HttpRequest, fixture_id: int) -> HttpResponse:
    """Everything the match-day briefing covers, on one page that prints as the PDF does."""
    fixture = _fixture(request, fixture_id, can_read_briefing)
    return render(request, "deployment/briefing.html", briefing_data.briefing_context(fixture))


@login_required
def briefing_pdf(request: HttpRequest, fixture_id: int) -> HttpResponse:
    from safeground.printing import pdf_response

    fixture = _fixture(request, fixture_id, can_read_briefing)
    return pdf_response(
        "deployment/briefing_print.html",
        briefing_data.briefing_context(fixture),
        f"briefing {fixture}",
        request,
    )
