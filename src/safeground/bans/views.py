"""The register's pages. Thin: parse, check, call one service or selector, render.

A person's record is shown only after a stated reason: the reason is kept in the session for a
few minutes (so the page can be reloaded after an action) and every showing is recorded again.
"""

import time
from collections.abc import Callable
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _

from safeground.accounts.models import Organisation, User
from safeground.accounts.permissions import (
    BAN_PROPOSERS,
    can_approve_ban,
    can_decide_appeal,
    can_export_subject_access,
    can_propose_ban,
    can_record_appeal,
    can_use_register,
    flag_organisation_ids,
    memberships,
    require,
)

from . import hooks, selectors, services
from .forms import (
    AccessSearchForm,
    AppealDecisionForm,
    AppealForm,
    DecisionForm,
    ProposeForm,
    ReasonForm,
    SubjectAccessForm,
)
from .models import Ban

REASON_SECONDS = 10 * 60


def _grant(request: HttpRequest, key: str) -> str | None:
    grant = request.session.get(f"register-reason:{key}")
    if grant and grant.get("until", 0) > time.time():
        return str(grant["reason"])
    return None


def _give(request: HttpRequest, key: str, reason: str) -> None:
    request.session[f"register-reason:{key}"] = {
        "reason": reason,
        "until": time.time() + REASON_SECONDS,
    }


def _user(request: HttpRequest) -> User:
    assert isinstance(request.user, User)
    return request.user


def _form_error(form: Any, error: services.BanError) -> None:
    form.add_error(error.field if error.field in form.fields else None, error.message)


def reason_gate(
    request: HttpRequest, key: str, heading: str, show: Callable[[str], HttpResponse]
) -> HttpResponse:
    """The reason form first (GET without a reason, or POST of one); then the record."""
    if request.method == "POST":
        form = ReasonForm(request.POST)
        if form.is_valid():
            try:
                _give(request, key, selectors.reason_check(form.cleaned_data["reason"]))
                return redirect(request.path)
            except services.BanError as error:
                _form_error(form, error)
        return render(request, "bans/reason.html", {"form": form, "heading": heading}, status=400)
    reason = _grant(request, key)
    if reason is None:
        return render(request, "bans/reason.html", {"form": ReasonForm(), "heading": heading})
    return show(reason)


@login_required
def register(request: HttpRequest) -> HttpResponse:
    """Find people; what waits for approval or an appeal decision; the register's counts."""
    require(can_use_register(request.user))
    query = request.GET.get("q", "")
    # The reason last given is offered again for a few minutes; each search records it anew.
    reason = request.GET.get("reason", _grant(request, "search") or "")
    found: list[Any] = []
    error, status = "", 200
    if query.strip():
        try:
            found = selectors.register_search(user=request.user, query=query, reason=reason)
        except services.BanError as refused:
            error, status = refused.message, refused.status
        else:
            _give(request, "search", reason.strip())
    return render(
        request,
        "bans/register.html",
        {
            "query": query,
            "reason": reason,
            "reason_error": error,
            "searched": bool(query.strip()) and not error,
            "found": found,
            "queue": selectors.register_queue(request.user),
            "may_propose": any(role in BAN_PROPOSERS for _, role in memberships(request.user)),
            "may_review_flags": bool(flag_organisation_ids(request.user)),
        },
        status=status,
    )


def _proposing_organisation(user: Any) -> Organisation:
    org_id = next((org for org, role in memberships(user) if role in BAN_PROPOSERS), None)
    if org_id is None or not can_propose_ban(user, org_id):
        raise PermissionDenied
    return Organisation.objects.get(pk=org_id)


@login_required
def propose(request: HttpRequest) -> HttpResponse:
    organisation = _proposing_organisation(request.user)
    form = ProposeForm(request.POST or None)
    if request.method == "POST":
        status = 400
        if form.is_valid():
            try:
                ban = services.ban_propose(
                    by=_user(request), organisation=organisation, **form.cleaned_data
                )
            except services.BanError as error:
                _form_error(form, error)
                status = error.status  # as the API answers it
            else:
                messages.success(
                    request,
                    _("Ban #%(ban)s proposed; it needs another user's approval.") % {"ban": ban.pk},
                )
                return redirect("register")
        return render(request, "bans/propose.html", {"form": form}, status=status)
    return render(request, "bans/propose.html", {"form": form})


@login_required
def person(request: HttpRequest, person_id: int) -> HttpResponse:
    summary = selectors.person_summary(request.user, person_id)

    def show(reason: str) -> HttpResponse:
        record = selectors.person_read(user=request.user, person_id=summary.pk, reason=reason)
        user = request.user
        bans = []
        sources = hooks.grounds_sources([ban.pk for ban in record.bans.all()])
        for ban in record.bans.all():
            may = {
                "decide": ban.status == Ban.Status.PROPOSED
                and can_approve_ban(user, ban.organisation_id, proposed_by_id=ban.proposed_by_id),
                "appeal": ban.status == Ban.Status.ACTIVE
                and can_record_appeal(user, ban.organisation_id),
                "decide_appeal": ban.status == Ban.Status.APPEALED
                and can_decide_appeal(
                    user,
                    ban.organisation_id,
                    proposed_by_id=ban.proposed_by_id,
                    approved_by_id=ban.approved_by_id,
                ),
            }
            bans.append((ban, may, sources.get(ban.pk, [])))
        may_export = can_export_subject_access(user, record.organisation_id)
        return render(
            request,
            "bans/person.html",
            {
                "person": record,
                "bans": bans,
                "reason": reason,
                "may_export": may_export,
                "export_form": SubjectAccessForm(),
            },
        )

    heading = _("Person #%(person)s") % {"person": summary.pk}
    return reason_gate(request, f"person:{summary.pk}", heading, show)


def _ban_action(
    request: HttpRequest,
    ban_id: int,
    allowed: Callable[[Ban], bool],
    form_class: type,
    act: Callable[[Ban, Any], Any],
) -> HttpResponse:
    ban = selectors.ban_for(request.user, ban_id)
    require(allowed(ban))
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    form = form_class(request.POST)
    if form.is_valid():
        try:
            act(ban, form.cleaned_data)
        except services.BanError as error:
            messages.error(request, f"{error.field}: {error.message}")
        else:
            return redirect("person", ban.person_id)
    else:
        for field, errors in form.errors.items():
            messages.error(request, f"{field}: {' '.join(str(e) for e in errors)}")
    return redirect("person", ban.person_id)


@login_required
def decide(request: HttpRequest, ban_id: int) -> HttpResponse:
    """Approve or reject a proposal: another user with the approval right."""

    def act(ban: Ban, data: dict[str, Any]) -> Ban:
        service = services.ban_approve if data["decision"] == "approve" else services.ban_reject
        return service(ban=ban, by=_user(request), reason=data["reason"])

    return _ban_action(
        request,
        ban_id,
        lambda ban: can_approve_ban(
            request.user, ban.organisation_id, proposed_by_id=ban.proposed_by_id
        ),
        DecisionForm,
        act,
    )


@login_required
def appeal(request: HttpRequest, ban_id: int) -> HttpResponse:
    return _ban_action(
        request,
        ban_id,
        lambda ban: can_record_appeal(request.user, ban.organisation_id),
        AppealForm,
        lambda ban, data: services.ban_appeal(ban=ban, by=_user(request), reason=data["reason"]),
    )


@login_required
def appeal_decide(request: HttpRequest, ban_id: int) -> HttpResponse:
    """A third user: neither the proposer nor the approver."""
    return _ban_action(
        request,
        ban_id,
        lambda ban: can_decide_appeal(
            request.user,
            ban.organisation_id,
            proposed_by_id=ban.proposed_by_id,
            approved_by_id=ban.approved_by_id,
        ),
        AppealDecisionForm,
        lambda ban, data: services.ban_appeal_decide(
            ban=ban, by=_user(request), outcome=data["outcome"], reason=data["reason"]
        ),
    )


@login_required
def access_records(request: HttpRequest) -> HttpResponse:
    """The auditor's search of the one access trail of personal data."""
    form = AccessSearchForm(request.GET or None)
    filters: dict[str, Any] = {}
    status = 200
    if form.is_bound:
        if form.is_valid():
            data = form.cleaned_data
            filters = {
                "username": data["username"],
                "action": data["action"],
                "person_id": data["person"],
                "subject": data["subject"],
                "since": data["since"],
                "until": data["until"],
            }
        else:
            status = 400
    records = selectors.access_records_search(user=request.user, **filters)
    return render(
        request,
        "bans/access_records.html",
        {"form": form, "records": records[:500], "total": records.count()},
        status=status,
    )
