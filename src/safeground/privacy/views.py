"""The subject-access exports' routes: a person on the register (offered on the register's
person page, whose form is the register's) and a text-line phone, answered here, where every
app's part is gathered."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed, JsonResponse
from django.shortcuts import redirect

from safeground.accounts.permissions import can_export_subject_access, require
from safeground.bans.forms import SubjectAccessForm
from safeground.bans.selectors import person_summary
from safeground.bans.services import BanError

from .selectors import (
    SubjectAccessError,
    phone_export_organisation,
    phone_export_organisations,
    phone_subject_access_export,
    subject_access_export,
)


@login_required
def subject_access(request: HttpRequest, person_id: int) -> HttpResponse:
    """A subject-access export of one person: a JSON download, recorded with its reason."""
    summary = person_summary(request.user, person_id)
    require(can_export_subject_access(request.user, summary.organisation_id))
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    form = SubjectAccessForm(request.POST)
    if form.is_valid():
        try:
            export = subject_access_export(
                user=request.user, person_id=summary.pk, reason=form.cleaned_data["reason"]
            )
        except BanError as error:
            messages.error(request, f"{error.field}: {error.message}")
        else:
            response = JsonResponse(export, json_dumps_params={"indent": 2, "ensure_ascii": False})
            name = f"subject-access-person-{summary.pk}.json"
            response["Content-Disposition"] = f'attachment; filename="{name}"'
            response["Cache-Control"] = "no-store"  # criminal-offence data: no copy in caches
            return response
    else:
        for field, errors in form.errors.items():
            messages.error(request, f"{field}: {' '.join(str(e) for e in errors)}")
    return redirect("person", summary.pk)


@login_required
def phone_subject_access(request: HttpRequest) -> HttpResponse:
    """Everything an organisation holds about a phone number, for its owner's request (Art. 15):
    POST phone, reason, and the organisation asking when the user answers for several. A JSON
    download, recorded; another club's reports of the same phone are not in it."""
    require(bool(phone_export_organisations(request.user)))
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    try:
        organisation = phone_export_organisation(request.user, request.POST.get("organisation", ""))
        export = phone_subject_access_export(
            user=request.user,
            organisation=organisation,
            phone=request.POST.get("phone", ""),
            reason=request.POST.get("reason", ""),
        )
    except SubjectAccessError as error:
        return JsonResponse(error.to_json(), status=error.status)
    response = JsonResponse(export, json_dumps_params={"indent": 1, "ensure_ascii": False})
    response["Content-Disposition"] = 'attachment; filename="subject-access-phone.json"'
    response["Cache-Control"] = "no-store"
    return response
