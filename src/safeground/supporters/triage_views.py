"""The control room's side: the queue of supporters' reports (an htmx fragment under the map),
the decisions on an item, a reporter's contact (recorded) and their photo, and the
subject-access export of a phone number (the seats' labels to print: sheet_views.py)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import (
    FileResponse,
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseNotAllowed,
)
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from safeground.accounts.models import User
from safeground.accounts.permissions import (
    can_triage_supporter_reports,
    require,
)
from safeground.errors import SafegroundError
from safeground.incidents.panels import Panel
from safeground.incidents.selectors import current_posts
from safeground.live.catalogue import LOG_ENTRY, SUPPORTERS_ITEM
from safeground.matches.models import Fixture
from safeground.matches.selectors import fixture_for

from .models import SupporterReport
from .selectors import (
    decided_recently,
    nearest_steward,
    queue,
    report_contact_read,
    report_photo_open,
)
from .services import item_accept, item_dismiss, item_merge, item_task

REFRESH_ON = (SUPPORTERS_ITEM, LOG_ENTRY)


def control_room_panel_for(user: Any, fixture: Fixture) -> Panel | None:
    if not can_triage_supporter_reports(user, fixture):
        return None
    return Panel(reverse("supporters_panel", args=[fixture.pk]), REFRESH_ON)


def _fixture(request: HttpRequest, fixture_id: int) -> Fixture:
    fixture = fixture_for(request.user, fixture_id)
    require(can_triage_supporter_reports(request.user, fixture))
    return fixture


def _user(request: HttpRequest) -> User:
    assert isinstance(request.user, User)
    return request.user


def _action_urls(fixture: Fixture) -> Any:
    """Each item's action URLs from one reverse: the queue's fifty items have four forms each,
    and reversing each cost a tenth of the fragment's CPU."""
    pattern = reverse("supporters_item_action", args=[fixture.pk, 987654321, "action"])
    before, after = pattern.split("987654321/action")
    return lambda item_id: {
        action: f"{before}{item_id}/{action}{after}"
        for action in ("accept", "merge", "dismiss", "task")
    }


def _panel(request: HttpRequest, fixture: Fixture, error: str = "") -> HttpResponse:
    items = queue(fixture)
    decided = list(decided_recently(fixture))
    posts = current_posts(fixture)
    suggested = {i.pk: nearest_steward(fixture, i.block_id, posts) for i in [*items, *decided]}
    urls = _action_urls(fixture)
    return render(
        request,
        "supporters/control_room_panel.html",
        {
            "fixture": fixture,
            "items": [
                (item, suggested[item.pk], item.first_reports, urls(item.pk))  # type: ignore[attr-defined]
                for item in items
            ],
            "decided": [(item, suggested[item.pk], urls(item.pk)) for item in decided],
            "blocks": " ".join(sorted({i.block.code for i in items if i.block})),
            "error": error,
        },
    )


@login_required
@require_GET
def control_room_panel(request: HttpRequest, fixture_id: int) -> HttpResponse:
    """The queue, trusted reporters first; the items decided lately with their steward."""
    return _panel(request, _fixture(request, fixture_id))


@login_required
def item_action(request: HttpRequest, fixture_id: int, item_id: int, action: str) -> HttpResponse:
    """accept / merge / dismiss / task: one service each; the fragment comes back refreshed."""
    fixture = _fixture(request, fixture_id)
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    by = _user(request)
    try:
        if action == "accept":
            item = item_accept(fixture=fixture, item_id=item_id, by=by)
            if request.POST.get("task"):
                item_task(fixture=fixture, item_id=item.pk, by=by)
        elif action == "merge":
            seq = request.POST.get("seq", "").strip().lstrip("#")
            if not seq.isdigit() or len(seq) > 9:
                raise SafegroundError("seq", _("give the incident's number, such as 12"))
            item_merge(fixture=fixture, item_id=item_id, by=by, seq=int(seq))
        elif action == "dismiss":
            item_dismiss(
                fixture=fixture, item_id=item_id, by=by, reason=request.POST.get("reason", "")
            )
        elif action == "task":
            item_task(fixture=fixture, item_id=item_id, by=by)
        else:
            raise Http404(_("No such action."))
    except SafegroundError as error:
        return _panel(request, fixture, f"{error.field}: {error.message}")
    return _panel(request, fixture)


@login_required
@require_GET
def report_contact(request: HttpRequest, fixture_id: int, report_id: int) -> HttpResponse:
    """A way to contact the reporter, which they chose to give: each read is recorded."""
    fixture = _fixture(request, fixture_id)
    report = get_object_or_404(
        SupporterReport.objects.select_related("fixture__home_club", "fixture__ground"),
        fixture=fixture,
        pk=report_id,
    )
    contact = report_contact_read(user=_user(request), report=report)
    return HttpResponse(contact or _("(none given)"), content_type="text/plain; charset=utf-8")


@login_required
@require_GET
def report_photo(request: HttpRequest, fixture_id: int, report_id: int) -> FileResponse:
    """A supporter's photo as kept: without the metadata it came with (photos.py); each opening
    is recorded."""
    fixture = _fixture(request, fixture_id)
    report = get_object_or_404(
        SupporterReport.objects.select_related("fixture__home_club", "fixture__ground"),
        fixture=fixture,
        pk=report_id,
    )
    if not report.photo:
        raise Http404(_("This report has no photo (or retention erased it)."))
    photo = report_photo_open(user=_user(request), report=report)
    response = FileResponse(photo, content_type=report.photo_type)
    response["Cache-Control"] = "private, max-age=3600"
    return response
