"""The public pages: a seat's own page (its QR code's address) and a report's status page.

No account and no script: a plain form posted as multipart, so the page loads on a poor phone
network in a stand (one small stylesheet, well under 60 KB). Every word is translatable.
"""

import secrets

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from safeground.errors import SafegroundError

from .abuse import TooManyReports, refusal_words
from .categories import CATEGORIES
from .models import Reporter
from .seats import Seat, seat_at
from .selectors import STATUS_LABELS, match_on_now, report_by_reference, report_status
from .services import Sender, report_receive

DEVICE_COOKIE = "sg_reporter"
DEVICE_COOKIE_DAYS = 400


def _device(request: HttpRequest) -> str:
    token = request.COOKIES.get(DEVICE_COOKIE, "")
    return token if 20 <= len(token) <= 64 else secrets.token_urlsafe(24)


def _seat(code: str) -> Seat:
    seat = seat_at(code)
    if seat is None:
        raise Http404(_("No seat has this code. Check the code on the seat back."))
    return seat


def _page(request: HttpRequest, seat: Seat, status: int = 200, **context: object) -> HttpResponse:
    fixture = match_on_now(seat.block.ground)
    response = render(
        request,
        "supporters/seat.html",
        {
            "seat": seat,
            "stand": seat.block.tier.stand,
            "fixture": fixture,
            "abuse": [c for c in CATEGORIES if c.abuse],
            "others": [c for c in CATEGORIES if not c.abuse],
            **context,
        },
        status=status,
    )
    token = _device(request)
    if request.COOKIES.get(DEVICE_COOKIE) != token:
        response.set_cookie(
            DEVICE_COOKIE,
            token,
            max_age=DEVICE_COOKIE_DAYS * 86400,
            httponly=True,
            samesite="Lax",
            secure=request.is_secure(),
        )
    return response


def _refusal(error: SafegroundError) -> str:
    """The words a supporter reads; the field's name would mean nothing to them."""
    if isinstance(error, TooManyReports):
        return refusal_words(error)
    messages = {
        "photo": _("The photo could not be used: send a JPEG, PNG or WebP image under 10 MB."),
        "text": _("Please keep the description under 1,000 characters."),
        "contact": _("Please keep the contact details under 200 characters."),
        "category": _("Choose what you are reporting."),
    }
    return messages.get(error.field, _("The report could not be sent. Please try again."))


@require_http_methods(["GET", "POST"])
def seat_page(request: HttpRequest, code: str) -> HttpResponse:
    """The seat's page: what to report, for the ground's match on now."""
    seat = _seat(code)
    if request.method == "GET":
        if seat.code != code:  # a code of the first kind, or typed in another case
            return redirect("supporters_seat", seat.code)
        return _page(request, seat)
    fixture = match_on_now(seat.block.ground)
    if fixture is None:
        return _page(request, seat, status=409)
    try:
        report = report_receive(
            fixture=fixture,
            sender=Sender(
                Reporter.Channel.WEB, _device(request), request.META.get("REMOTE_ADDR", "")
            ),
            block=seat.block,
            row=seat.row,
            seat=str(seat.number),
            category=request.POST.get("category", ""),
            text=request.POST.get("text", ""),
            contact=request.POST.get("contact", ""),
            photo=request.FILES.get("photo"),
        )
    except SafegroundError as error:
        response = _page(request, seat, status=error.status, error=_refusal(error))
        if isinstance(error, TooManyReports):
            response["Retry-After"] = str(error.retry_after)
        return response
    return redirect("supporters_status", report.reference)


def status_page(request: HttpRequest, reference: str) -> HttpResponse:
    """What became of a report: received, being dealt with, dealt with."""
    report = report_by_reference(reference)
    if report is None:
        raise Http404(_("No report has this reference."))
    status = report_status(report)
    return render(
        request,
        "supporters/status.html",
        {
            "report": report,
            "status": status,
            "status_label": STATUS_LABELS[status],
            "steps": list(STATUS_LABELS.items()),
        },
    )
