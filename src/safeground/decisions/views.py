"""Decision log pages: the log (record, amend, review), its PDF, the control room's banner (the
radio switch, reviews due, a major incident declared) and the steward's radio-down banner (htmx
fragments in the log's pages, incidents/panels.py); a major incident declared and its M/ETHANE
report's page."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _

from safeground.accounts.models import User
from safeground.accounts.permissions import (
    can_declare_major_incident,
    can_log_decisions,
    can_open_steward_page,
    can_read_decisions,
    can_switch_radio,
    require,
)
from safeground.clock import hhmm
from safeground.errors import SafegroundError
from safeground.incidents.panels import Panel
from safeground.live.catalogue import DECISION, MAJOR_INCIDENT, RADIO_STATUS
from safeground.matches.models import Fixture
from safeground.matches.selectors import fixture_for

from . import services
from .forms import AmendForm, DecisionForm, MethaneCorrectForm, MethaneForm, RadioForm, ReviewForm
from .parts import KEYS
from .selectors import (
    decision_log,
    decision_seen_by,
    fixture_for_decisions,
    fixture_for_logging_decisions,
    fixture_for_major_incident,
    fixture_for_radio,
    methane_history,
    methane_latest,
    methane_places,
    methane_report,
    radio_down_since,
    radio_latest_switch,
    reviews_due,
)


def control_room_banner_for(user: Any, fixture: Fixture) -> Panel | None:
    if not can_read_decisions(user, fixture):
        return None
    return Panel(
        reverse("decisions_banner", args=[fixture.pk]), (DECISION, RADIO_STATUS, MAJOR_INCIDENT)
    )


def steward_banner_for(user: Any, fixture: Fixture) -> Panel | None:
    if not can_open_steward_page(user, fixture):
        return None
    return Panel(reverse("decisions_steward_banner", args=[fixture.pk]), (RADIO_STATUS,))


def _user(request: HttpRequest) -> User:
    assert isinstance(request.user, User)
    return request.user


def _refused_on(form: Any, error: SafegroundError) -> int:
    """The service's refusal as a form error on the field it names (else the whole form's); the
    page answers with the refusal's own status (ADR 0021)."""
    form.add_error(error.field if error.field in form.fields else None, error.message)
    return error.status


def _log_page(
    request: HttpRequest, fixture: Fixture, form: Any = None, status: int = 200
) -> HttpResponse:
    may_log = can_log_decisions(request.user, fixture)
    return render(
        request,
        "decisions/log.html",
        {
            "fixture": fixture,
            "rows": decision_log(request.user, fixture),
            "form": form or (DecisionForm(fixture=fixture) if may_log else None),
            "may_log": may_log,
            "review_form": ReviewForm(),
            "radio_down": radio_down_since(fixture),
        },
        status=status,
    )


@login_required
def decision_log_page(request: HttpRequest, fixture_id: int) -> HttpResponse:
    """The match's decision log; the loggist records a commander's decision here."""
    fixture = fixture_for_decisions(request.user, fixture_id)
    if request.method != "POST":
        return _log_page(request, fixture)
    require(can_log_decisions(request.user, fixture))
    form = DecisionForm(request.POST, fixture=fixture)
    status = 400
    if form.is_valid():
        try:
            done = services.decision_record(
                fixture=fixture,
                loggist=_user(request),
                decision_maker=form.cleaned_data["decision_maker"],
                parts=form.parts(),
                decided_at=form.cleaned_data["decided_at"],
                retrospective_reason=form.cleaned_data["retrospective_reason"],
            )
        except SafegroundError as error:
            status = _refused_on(form, error)
        else:
            return redirect(f"{reverse('decisions', args=[fixture.pk])}#decision-{done.entry.seq}")
    return _log_page(request, fixture, form, status=status)


def _amend_initial(decision: Any) -> dict[str, Any]:
    names = [*KEYS, "home_only", "kickoff_delay"]
    initial = {name: getattr(decision, name) for name in names}
    initial["decision_maker"] = decision.decision_maker_id
    initial["links"] = ", ".join(str(seq) for seq in decision.links)
    # A review time already passed is not copied: the amendment is decided now, and its review
    # must come after that (the form says why the field is empty).
    if decision.review_at and decision.review_at > timezone.now():
        initial["review_at"] = timezone.localtime(decision.review_at)
    return initial


def _amend_form(decision: Any, fixture: Fixture, data: Any = None) -> AmendForm:
    form = AmendForm(data, fixture=fixture, initial=None if data else _amend_initial(decision))
    if decision.review_at and decision.review_at <= timezone.now():
        form.fields["review_at"].help_text = _(
            "the decision's review time (%(at)s) has passed: give a new one, or leave it empty"
        ) % {"at": hhmm(decision.review_at)}
    return form


@login_required
def decision_amend_page(request: HttpRequest, fixture_id: int, decision_id: int) -> HttpResponse:
    """An amendment: the decision's parts to change, and why; the old one is struck through."""
    fixture = fixture_for_logging_decisions(request.user, fixture_id)
    decision = decision_seen_by(request.user, fixture, decision_id)
    if request.method != "POST":
        form = _amend_form(decision, fixture)
        return render(
            request,
            "decisions/amend.html",
            {"fixture": fixture, "decision": decision, "form": form},
        )
    form = _amend_form(decision, fixture, request.POST)
    status = 400
    if form.is_valid():
        try:
            done = services.decision_amend(
                decision=decision,
                loggist=_user(request),
                decision_maker=form.cleaned_data["decision_maker"],
                parts=form.parts(),
                reason=form.cleaned_data["reason"],
                decided_at=form.cleaned_data["decided_at"],
                retrospective_reason=form.cleaned_data["retrospective_reason"],
            )
        except SafegroundError as error:
            status = _refused_on(form, error)
        else:
            return redirect(f"{reverse('decisions', args=[fixture.pk])}#decision-{done.entry.seq}")
    return render(
        request,
        "decisions/amend.html",
        {"fixture": fixture, "decision": decision, "form": form},
        status=status,
    )


@login_required
def decision_review_view(request: HttpRequest, fixture_id: int, decision_id: int) -> HttpResponse:
    fixture = fixture_for_logging_decisions(request.user, fixture_id)
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    decision = decision_seen_by(request.user, fixture, decision_id)
    form = ReviewForm(request.POST)
    status = 400
    if form.is_valid():
        try:
            services.decision_review(
                decision=decision,
                by=_user(request),
                note=form.cleaned_data["note"],
                next_review_at=form.cleaned_data["next_review_at"],
            )
        except SafegroundError as error:
            status = _refused_on(form, error)
        else:
            return redirect(
                f"{reverse('decisions', args=[fixture.pk])}#decision-{decision.entry.seq}"
            )
    return render(
        request,
        "decisions/review.html",
        {"fixture": fixture, "decision": decision, "review_form": form},
        status=status,
    )


@login_required
def decision_log_pdf(request: HttpRequest, fixture_id: int) -> HttpResponse:
    from safeground.printing import pdf_response

    fixture = fixture_for_decisions(request.user, fixture_id)
    return pdf_response(
        "decisions/log_print.html",
        {"fixture": fixture, "rows": decision_log(request.user, fixture), "now": timezone.now()},
        f"decision log {fixture}",
        request,
    )


def _banner(request: HttpRequest, fixture: Fixture, form: Any = None) -> HttpResponse:
    may_switch = can_switch_radio(request.user, fixture)
    latest = radio_latest_switch(fixture)
    if form is None and may_switch:
        # The commander who decided the last switch is the one most likely to decide the next:
        # the choice stays after use and after the strip is drawn again (issue 38).
        maker = latest.decision.decision_maker_id if latest else None
        form = RadioForm(fixture=fixture, initial={"decision_maker": maker})
    return render(
        request,
        "decisions/_banner.html",
        {
            "fixture": fixture,
            "due": reviews_due(request.user, fixture),
            "radio_down": latest if latest is not None and latest.down else None,
            "may_switch": may_switch,
            "radio_form": form,
            "major_incident": methane_latest(fixture),
            "may_declare": can_declare_major_incident(request.user, fixture),
        },
    )


@login_required
def decisions_banner(request: HttpRequest, fixture_id: int) -> HttpResponse:
    """The control room's strip: radio down (and the switch), decision reviews due."""
    return _banner(request, fixture_for_decisions(request.user, fixture_id))


@login_required
def radio_switch(request: HttpRequest, fixture_id: int) -> HttpResponse:
    """Radio down / back up (the `down` field: 1 or 0); answered with the banner again."""
    fixture = fixture_for_radio(request.user, fixture_id)
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    form: RadioForm | None = RadioForm(request.POST, fixture=fixture)
    assert form is not None
    if form.is_valid():
        switch = services.radio_down if request.POST.get("down") == "1" else services.radio_restore
        try:
            switch(
                fixture=fixture,
                by=_user(request),
                decision_maker=form.cleaned_data["decision_maker"],
                note=form.cleaned_data["note"],
            )
        except SafegroundError as error:
            _refused_on(form, error)  # the strip is answered as it is, showing the refusal
        else:
            form = None
    return _banner(request, fixture, form)


@login_required
def steward_radio_banner(request: HttpRequest, fixture_id: int) -> HttpResponse:
    fixture = fixture_for(request.user, fixture_id)
    require(can_open_steward_page(request.user, fixture))
    return render(
        request,
        "decisions/steward_banner.html",
        {"fixture": fixture, "radio_down": radio_down_since(fixture)},
    )


# --- a major incident: its M/ETHANE report --------------------------------------------------


@login_required
def major_incident_page(request: HttpRequest, fixture_id: int) -> HttpResponse:
    """The M/ETHANE report as it stands, and every earlier one below, corrected parts struck
    through: whoever works the match in the control room, the police and the away club read it."""
    fixture = fixture_for_decisions(request.user, fixture_id)
    return render(
        request,
        "decisions/major_incident.html",
        {
            "fixture": fixture,
            "rows": methane_history(fixture),
            "may_declare": can_declare_major_incident(request.user, fixture),
        },
    )


def _methane_form_page(
    request: HttpRequest, fixture: Fixture, form: MethaneForm, report: Any = None, status: int = 200
) -> HttpResponse:
    return render(
        request,
        "decisions/methane_form.html",
        {"fixture": fixture, "form": form, "report": report},
        status=status,
    )


@login_required
def major_incident_declare(request: HttpRequest, fixture_id: int) -> HttpResponse:
    """A commander declares a major incident: the first message, its M/ETHANE report."""
    fixture = fixture_for_major_incident(request.user, fixture_id)
    places = methane_places(fixture)
    if request.method != "POST":
        if methane_latest(fixture) is not None:  # declared already: what is left is correcting
            return redirect("major_incident", fixture.pk)
        return _methane_form_page(request, fixture, MethaneForm(places=places))
    form = MethaneForm(request.POST, places=places)
    status = 400
    if form.is_valid():
        try:
            services.major_incident_declare(fixture=fixture, by=_user(request), parts=form.parts())
        except SafegroundError as error:
            status = _refused_on(form, error)
        else:
            return redirect("major_incident", fixture.pk)
    return _methane_form_page(request, fixture, form, status=status)


@login_required
def methane_correct(request: HttpRequest, fixture_id: int, report_id: int) -> HttpResponse:
    """A correction of the report: the parts changed, and why; the old report struck through."""
    fixture = fixture_for_major_incident(request.user, fixture_id)
    report = methane_report(fixture, report_id)
    places = methane_places(fixture)
    if request.method != "POST":
        initial = {key: text for key, _label, text in report.parts()}
        form = MethaneCorrectForm(places=places, initial=initial)
        return _methane_form_page(request, fixture, form, report)
    form = MethaneCorrectForm(request.POST, places=places)
    status = 400
    if form.is_valid():
        try:
            services.methane_correct(
                report=report,
                by=_user(request),
                parts=form.parts(),
                reason=form.cleaned_data["reason"],
            )
        except SafegroundError as error:
            status = _refused_on(form, error)
        else:
            return redirect("major_incident", fixture.pk)
    return _methane_form_page(request, fixture, form, report, status=status)
