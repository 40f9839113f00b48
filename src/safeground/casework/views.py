"""The casework pages. Thin: parse, check, call one service or selector, render.

A refused input re-renders the case page with the message beside the form it came from (400).
"""

from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import FileResponse, HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.http.response import HttpResponseBase
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.utils.text import slugify
from django.utils.translation import gettext as _

from safeground.accounts.models import User
from safeground.accounts.permissions import (
    can_identify,
    can_propose_ban,
    can_read_person,
    require,
)
from safeground.bans.models import Person
from safeground.entry.models import Ticket
from safeground.errors import SafegroundError, large_uploads, text_answer
from safeground.incidents.models import LogEntry

from . import selectors, services
from .evidence import evidence_add, max_bytes
from .forms import (
    ArrestForm,
    BanForm,
    CloseForm,
    EvidenceForm,
    OpenCaseForm,
    OutcomeForm,
    SubjectForm,
    WhoAreaForm,
    WhoForm,
)
from .models import Case, Evidence, Outcome, Subject
from .services import FileErased
from .who import PAGE_SIZE, WhoWasThere

# A video's form fields and multipart framing, on top of the file itself.
EVIDENCE_FORM_BYTES = 64 * 1024


def _user(request: HttpRequest) -> User:
    assert isinstance(request.user, User)
    return request.user


def _errors(form: Any) -> str:
    return "; ".join(f"{f}: {' '.join(str(e) for e in errs)}" for f, errs in form.errors.items())


@login_required
def casework_fixture(request: HttpRequest, fixture_id: int) -> HttpResponse:
    """The match's reports (to open a case from) and its cases."""
    fixture = selectors.fixture_for_casework(request.user, fixture_id)
    reports = selectors.reports_of(request.user, fixture)
    form = OpenCaseForm(request.POST or None, entries=reports)
    status = 200
    if request.method == "POST":
        if form.is_valid():
            chosen = [e for e in reports if e.pk in set(form.cleaned_data["entries"])]
            try:
                case = services.case_open(
                    by=_user(request), fixture=fixture, entries=chosen,
                    title=form.cleaned_data["title"], summary=form.cleaned_data["summary"],
                )  # fmt: skip
            except SafegroundError as error:
                form.add_error(error.field if error.field in form.fields else None, error.message)
            else:
                return redirect("case", case.pk)
        status = 400
    return render(
        request,
        "casework/fixture.html",
        {
            "fixture": fixture,
            "reports": reports,
            "form": form,
            "cases": selectors.cases_of(request.user, fixture),
        },
        status=status,
    )


@login_required
def entry_arrest(request: HttpRequest, fixture_id: int, entry_id: int) -> HttpResponse:
    """An arrest recorded from its log entry in one form (into the entry's case, opened if
    none); who was arrested may be added to the case when known."""
    fixture = selectors.fixture_for_casework(request.user, fixture_id)
    entry = selectors.report_of(request.user, fixture, entry_id)
    already = selectors.arrests_already(entry)
    form = ArrestForm(
        request.POST or None, initial=selectors.arrest_defaults(entry), already=bool(already)
    )
    status = 200
    if request.method == "POST":
        if form.is_valid() and already and not form.cleaned_data["another"]:
            form.add_error("another", _("tick it to record a second arrest from this entry"))
        if form.is_valid():
            try:
                outcome = services.arrest_record(
                    entry=entry, by=_user(request), **form.particulars()
                )
            except SafegroundError as error:
                form.add_error(error.field if error.field in form.fields else None, error.message)
            else:
                messages.success(
                    request,
                    _("Arrest recorded from log entry #%(seq)s (ref. %(reference)s). Add who was "
                      "arrested when known.") % {"seq": entry.seq, "reference": outcome.reference},
                )  # fmt: skip
                return redirect("case", outcome.case_id)
        status = 400
    return render(
        request,
        "casework/arrest.html",
        {
            "fixture": fixture,
            "entry": entry,
            "form": form,
            "case": services.case_of_entry(entry),
            "already": already,
        },
        status=status,
    )


def _case_page(
    request: HttpRequest, case: Case, *, errors: dict[str, str] | None = None, status: int = 200
) -> HttpResponse:
    detail = selectors.case_detail(case)
    user = request.user
    return render(
        request,
        "casework/case.html",
        {
            "case": case,
            **detail,
            "errors": errors or {},
            "offences": services.case_offences(case),
            "home_office_groups": Outcome.HomeOfficeOffence.choices,
            "home_office_group": services.case_home_office_group(case),
            "clubs": Outcome.Club.choices,
            "may_identify": can_identify(user, case.fixture),
            "may_propose_ban": can_propose_ban(user, case.organisation_id),
            "evidence_kinds": Evidence.Kind.choices,
            "subject_kinds": [
                c for c in Subject.Kind.choices if c[0] != Subject.Kind.TICKET_HOLDER
            ],
            "outcome_form": OutcomeForm(),
            "today": timezone.localdate(),
        },
        status=status,
    )


@login_required
def case(request: HttpRequest, case_id: int) -> HttpResponse:
    return _case_page(request, selectors.case_for(request.user, case_id))


def _case_post(
    request: HttpRequest, case_id: int, allowed: Callable[[Case], bool] | None = None
) -> Case | HttpResponse:
    """The case, checked (and the action's own right), then the method: POST only."""
    case = selectors.case_for(request.user, case_id)
    if allowed is not None:
        require(allowed(case))
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    return case


def _refused(
    request: HttpRequest, case: Case, where: str, message: str, status: int = 400
) -> HttpResponse:
    """The case page with the refusal at its form: 400 for a form's errors, else the service
    refusal's own status (ADR 0021)."""
    return _case_page(request, case, errors={where: message}, status=status)


def _pager(found: WhoWasThere | None) -> list[tuple[int, str]]:
    """The pages next to the one shown: (page, the button's words)."""
    if found is None:
        return []
    pager = []
    if found.page > 1:
        pager.append((found.page - 1, f"Previous {PAGE_SIZE}"))
    if found.page < found.pages:
        pager.append((found.page + 1, f"Next {PAGE_SIZE}"))
    return pager


@login_required
def case_who(request: HttpRequest, case_id: int) -> HttpResponse:
    """Who sat near the case's entries, narrow first: how many people the search covers (no
    name), a wider search counted on asking and confirmed before its names; the names a page at
    a time, each page read with a stated reason and recorded."""
    case = selectors.case_for(request.user, case_id)
    require(can_identify(request.user, case.fixture))
    entry_ids = list(case.entries.values_list("pk", flat=True))
    posted = request.method == "POST"
    # Two forms with a `rows` and an `adjacent` on one page: ids of their own.
    area = WhoAreaForm(request.POST if posted else (request.GET or None), auto_id="area-%s")
    widened = area.is_bound and area.is_valid()
    rows = area.cleaned_data["rows"] if widened else 0
    adjacent = area.cleaned_data["adjacent"] if widened else False
    form = WhoForm(request.POST if posted else None, initial={"rows": rows, "adjacent": adjacent})
    status = 400 if area.is_bound and not widened else 200
    counted = found = None
    try:
        counted = selectors.who_count(
            user=request.user, fixture=case.fixture, entry_ids=entry_ids, rows=rows,
            adjacent=adjacent,
        )  # fmt: skip
        if posted and form.is_valid():
            found = selectors.who_was_there(
                user=request.user, fixture=case.fixture, entry_ids=entry_ids,
                rows=form.cleaned_data["rows"], adjacent=form.cleaned_data["adjacent"],
                reason=form.cleaned_data["reason"], page=form.cleaned_data["page"],
            )  # fmt: skip
        elif posted:
            status = 400
    except SafegroundError as error:
        form.add_error(error.field if error.field in form.fields else None, error.message)
        status = 400 if posted else status
    subjects = set(case.subjects.exclude(ticket=None).values_list("ticket_id", flat=True))
    return render(
        request,
        "casework/who.html",
        {
            "case": case,
            "area": area,
            "form": form,
            "counted": counted,
            "found": found,
            "large_from": settings.SAFEGROUND_WHO_LARGE,
            "pager": _pager(found),
            "subject_tickets": subjects,
        },
        status=status,
    )


@login_required
def case_subject_add(request: HttpRequest, case_id: int) -> HttpResponse:
    case = _case_post(request, case_id)
    if isinstance(case, HttpResponse):
        return case
    form = SubjectForm(request.POST)
    if not form.is_valid():
        return _refused(request, case, "subject", _errors(form))
    data = form.cleaned_data
    ticket = Ticket.objects.filter(pk=data["ticket"]).first() if data["ticket"] else None
    person = Person.objects.filter(pk=data["person"]).first() if data["person"] else None
    if ticket is not None:
        # Naming a ticket holder is identifying them: only those with the right.
        require(can_identify(request.user, case.fixture))
    if data["kind"] == Subject.Kind.PERSON:
        # A person on the register: only its readers (the register's rule), and it is recorded.
        require(can_read_person(request.user, case.organisation_id))
    try:
        subject = services.subject_add(
            case=case, by=_user(request), kind=data["kind"], person=person, ticket=ticket,
            description=data["description"],
        )  # fmt: skip
    except SafegroundError as error:
        return _refused(request, case, "subject", error.message, error.status)
    messages.success(request, _("Added to the case: %(subject)s.") % {"subject": subject.label})
    return redirect("case", case.pk)


def _subject(case: Case, subject_id: int | None) -> Subject | None:
    if not subject_id:
        return None
    return get_object_or_404(
        Subject.objects.select_related("ticket", "person"), pk=subject_id, case=case
    )


@login_required
def case_outcome(request: HttpRequest, case_id: int) -> HttpResponse:
    case = _case_post(request, case_id)
    if isinstance(case, HttpResponse):
        return case
    form = OutcomeForm(request.POST)
    if not form.is_valid():
        return _refused(request, case, "outcome", _errors(form))
    data = form.cleaned_data
    try:
        services.outcome_record(
            case=case, by=_user(request), kind=data["kind"],
            subject=_subject(case, data["subject"]), offence=data["offence"],
            home_office_offence=data["home_office_offence"], club=data["club"], force=data["force"],
            reference=data["reference"], note=data["note"],
        )  # fmt: skip
    except SafegroundError as error:
        return _refused(request, case, "outcome", f"{error.field}: {error.message}", error.status)
    return redirect("case", case.pk)


@login_required
def case_ban_propose(request: HttpRequest, case_id: int) -> HttpResponse:
    """A club ban for a subject, into the register's approval flow (a ban officer proposes)."""
    case = _case_post(
        request, case_id, lambda case: can_propose_ban(request.user, case.organisation_id)
    )
    if isinstance(case, HttpResponse):
        return case
    form = BanForm(request.POST)
    if not form.is_valid():
        return _refused(request, case, "ban", _errors(form))
    data = form.cleaned_data
    subject = _subject(case, data["subject"])
    assert subject is not None
    try:
        outcome = services.case_ban_propose(
            case=case, subject=subject, by=_user(request), grounds=data["grounds"],
            starts_on=data["starts_on"], is_life=data["is_life"], ends_on=data["ends_on"],
            scope=data["scope"],
        )  # fmt: skip
    except SafegroundError as error:
        return _refused(request, case, "ban", f"{error.field}: {error.message}", error.status)
    messages.success(
        request,
        _("Ban #%(ban)s proposed; it needs another user's approval.") % {"ban": outcome.ban_id},
    )
    return redirect("case", case.pk)


@large_uploads(lambda: max_bytes(Evidence.Kind.VIDEO) + EVIDENCE_FORM_BYTES)
@login_required
def case_evidence_add(request: HttpRequest, case_id: int) -> HttpResponse:
    case = _case_post(request, case_id)
    if isinstance(case, HttpResponse):
        return case
    form = EvidenceForm(request.POST, request.FILES)
    if not form.is_valid():
        return _refused(request, case, "evidence", _errors(form))
    data = form.cleaned_data
    entry = (
        get_object_or_404(LogEntry, pk=data["entry"], fixture=case.fixture)
        if data["entry"]
        else None
    )
    try:
        evidence = evidence_add(
            by=_user(request), fixture=case.fixture, case=case, entry=entry,
            subject=_subject(case, data["subject"]), kind=data["kind"], upload=data["file"],
            description=data["description"], camera=data["camera"],
            footage_from=data["footage_from"], footage_to=data["footage_to"],
        )  # fmt: skip
    except SafegroundError as error:
        return _refused(request, case, "evidence", f"{error.field}: {error.message}", error.status)
    added = _("Evidence #%(evidence)s added.") % {"evidence": evidence.pk}
    messages.success(request, added + _sha(evidence))
    return redirect("case", case.pk)


@login_required
def case_close(request: HttpRequest, case_id: int) -> HttpResponse:
    case = _case_post(request, case_id)
    if isinstance(case, HttpResponse):
        return case
    form = CloseForm(request.POST)
    if not form.is_valid():
        return _refused(request, case, "close", _errors(form))
    try:
        services.case_close(case=case, by=_user(request), reason=form.cleaned_data["reason"])
    except SafegroundError as error:
        return _refused(request, case, "close", error.message, error.status)
    return redirect("case", case.pk)


@login_required
def case_bundle(request: HttpRequest, case_id: int) -> FileResponse:
    """The case bundle (ZIP); the export is recorded in each evidence file's custody."""
    case = selectors.case_for(request.user, case_id)
    data = services.case_bundle_export(case=case, by=_user(request))
    name = slugify(f"case-{case.pk}-{case.title}")[:80]
    return FileResponse(
        data, content_type="application/zip", as_attachment=True, filename=f"{name}.zip"
    )


def _locker_page(
    request: HttpRequest, fixture: Any, *, error: str = "", status: int = 200
) -> HttpResponse:
    found = selectors.locker(request.user, fixture)
    return render(
        request,
        "casework/locker.html",
        {
            "fixture": fixture,
            "evidence": found.evidence,
            "photos": found.photos,
            "reports": selectors.reports_of(request.user, fixture),
            "evidence_kinds": Evidence.Kind.choices,
            "error": error,
        },
        status=status,
    )


@login_required
def evidence_locker(request: HttpRequest, fixture_id: int) -> HttpResponse:
    return _locker_page(request, selectors.fixture_for_casework(request.user, fixture_id))


@large_uploads(lambda: max_bytes(Evidence.Kind.VIDEO) + EVIDENCE_FORM_BYTES)
@login_required
def locker_evidence_add(request: HttpRequest, fixture_id: int) -> HttpResponse:
    """Evidence on a log entry, before (or without) a case: a screenshot of a post, a leaflet."""
    fixture = selectors.fixture_for_casework(request.user, fixture_id)
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    form = EvidenceForm(request.POST, request.FILES)
    if not form.is_valid() or not form.cleaned_data["entry"]:
        message = _errors(form) if form.errors else _("entry: choose the log entry it belongs to")
        return _locker_page(request, fixture, error=message, status=400)
    data = form.cleaned_data
    entry = next((e for e in selectors.reports_of(request.user, fixture) if e.pk == data["entry"]),
                 None)  # fmt: skip
    if entry is None:
        return _locker_page(
            request, fixture, error=_("entry: not a report of this match"), status=400
        )
    try:
        evidence = evidence_add(
            by=_user(request), fixture=fixture, entry=entry, kind=data["kind"],
            upload=data["file"], description=data["description"], camera=data["camera"],
            footage_from=data["footage_from"], footage_to=data["footage_to"],
        )  # fmt: skip
    except SafegroundError as error:
        return _locker_page(
            request, fixture, error=f"{error.field}: {error.message}", status=error.status
        )
    added = _("Evidence #%(evidence)s added to entry #%(seq)s.") % {
        "evidence": evidence.pk,
        "seq": entry.seq,
    }
    messages.success(request, added + _sha(evidence))
    return redirect("evidence_locker", fixture.pk)


def _file(stored: Any, *, content_type: str, name: str, download: bool) -> FileResponse:
    return FileResponse(
        stored.open("rb"), content_type=content_type, as_attachment=download, filename=name
    )


@login_required
def evidence_file(request: HttpRequest, evidence_id: int) -> HttpResponseBase:
    """A file of the locker, viewed (or downloaded with ?download=1): recorded in its custody.
    A file erased by retention answers 410 with its erasure and SHA-256."""
    download = request.GET.get("download") == "1"
    try:
        evidence = selectors.evidence_open(
            user=request.user, evidence_id=evidence_id, download=download
        )
    except FileErased as error:
        return text_answer(error)
    return _file(evidence.file, content_type=evidence.content_type,
                 name=evidence.original_name, download=download)  # fmt: skip


@login_required
def evidence_photo(request: HttpRequest, photo_id: int) -> HttpResponseBase:
    """A steward's photo from the locker, viewed or downloaded: recorded in its custody."""
    download = request.GET.get("download") == "1"
    try:
        photo = selectors.photo_open(user=request.user, photo_id=photo_id, download=download)
    except FileErased as error:
        return text_answer(error)
    name = f"photo-{photo.pk}-{photo.sha256[:12]}"
    return _file(photo.image, content_type=photo.content_type, name=name, download=download)


def _sha(evidence: Any) -> str:
    """The file's fingerprint after the message, to compare with a copy (none for a note)."""
    return (" " + _("SHA-256 %(sha)s") % {"sha": evidence.sha256}) if evidence.sha256 else ""
