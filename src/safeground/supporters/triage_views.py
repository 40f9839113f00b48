"""The control room's side: the queue of supporters' reports (an htmx fragment under the map),
the decisions on an item, a reporter's contact (recorded) and their photo, and the
subject-access export of a phone number (the seats' labels to print: sheet_views.py)."""

from __future__ import annotations

import math
import time
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import (
    FileResponse,
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseBadRequest,
    HttpResponseNotAllowed,
)
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils.translation import get_language, gettext_lazy
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
from safeground.kept import KeptCopy
from safeground.live.catalogue import LOG_ENTRY, SUPPORTERS_ITEM
from safeground.matches.models import Fixture
from safeground.matches.selectors import fixture_for, fixture_for_report

from .categories import CATEGORIES, LIFE
from .models import SupporterReport
from .selectors import (
    decided_recently,
    nearest_steward,
    queue,
    queue_version,
    report_contact_read,
    report_photo_open,
)
from .services import item_accept, item_dismiss, item_merge, item_task

REFRESH_ON = (SUPPORTERS_ITEM, LOG_ENTRY)
# The queue's fragment as last rendered, by match, page and language, with its queue_version.
_copies = KeptCopy("SAFEGROUND_LOG_CACHE_SECONDS", "SAFEGROUND_SUPPORTERS_QUEUE_GAP_SECONDS")
# Milliseconds after which a screen given a copy older than the latest change reads again
# (static/safeground/live-1.js reads it for every live panel).
READ_AGAIN_HEADER = "Safeground-Read-Again-Ms"
LIFE_CATEGORIES = frozenset(c.code for c in CATEGORIES if c.severity == LIFE)


def control_room_panel_for(user: Any, fixture: Fixture) -> Panel | None:
    if not can_triage_supporter_reports(user, fixture):
        return None
    return Panel(
        reverse("supporters_panel", args=[fixture.pk]),
        REFRESH_ON,
        anchor="supporters-queue",
        skip=gettext_lazy("Supporters' reports"),
    )


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


def _page(request: HttpRequest) -> int | None:
    """The queue's page asked for (a refresh or a decision keeps the page being read), or None
    when it is not a page number."""
    page = (request.POST.get("page") or request.GET.get("page") or "1").strip()
    return int(page) if page.isdigit() and len(page) <= 6 else None


def _not_a_page() -> HttpResponse:
    return HttpResponseBadRequest(_("page: a page of the queue, such as 2"))


def _panel(request: HttpRequest, fixture: Fixture, page: int, error: str = "") -> HttpResponse:
    waiting = queue(fixture, page=page)
    decided = list(decided_recently(fixture))
    posts = current_posts(fixture)
    suggested = {
        i.pk: nearest_steward(fixture, i.block_id, posts) for i in [*waiting.items, *decided]
    }
    urls = _action_urls(fixture)
    return render(
        request,
        "supporters/control_room_panel.html",
        {
            "fixture": fixture,
            "queue": waiting,
            "life": waiting.by_severity.get(LIFE, 0),
            "life_categories": LIFE_CATEGORIES,
            "items": [
                (item, suggested[item.pk], item.first_reports, urls(item.pk))  # type: ignore[attr-defined]
                for item in waiting.items
            ],
            "decided": [(item, suggested[item.pk], urls(item.pk)) for item in decided],
            "blocks": " ".join(waiting.blocks),
            "error": error,
        },
    )


@login_required
@require_GET
def control_room_panel(request: HttpRequest, fixture_id: int) -> HttpResponse:
    """The queue, a life at risk first (selectors.queue_rank), a page at a time; the items
    decided lately with their steward. Every control-room screen reads it after the queue's
    frames: its CPU is in the answer's Server-Timing (bench/bench_supporters.py reads it), and
    `render` beside it when this read made the copy the others are given."""
    started = time.thread_time()
    # The match as kept a few seconds per process, checked for this user as every read is: the
    # full read (five queries) only for the read that renders.
    fixture = fixture_for_report(request.user, fixture_id)
    require(can_triage_supporter_reports(request.user, fixture))
    page = _page(request)
    if page is None:
        response = _not_a_page()
        rendered = None
    else:
        # One copy per match, page and language, made again when the queue's version changes,
        # at most every SAFEGROUND_SUPPORTERS_QUEUE_GAP_SECONDS (kept.KeptCopy).
        making = 0.0

        def render() -> bytes:
            nonlocal making
            making = time.thread_time()
            content = _panel(request, _fixture(request, fixture_id), page).content
            making = time.thread_time() - making
            return content

        html, rendered, read_again = _copies.get(
            (fixture.pk, page, get_language()), lambda: queue_version(fixture), render
        )
        response = HttpResponse(html)
        if read_again:  # a copy from before the latest change: the screen reads again then
            response[READ_AGAIN_HEADER] = str(math.ceil(read_again * 1000))
    timing = f"cpu;dur={(time.thread_time() - started) * 1000:.2f}"
    if rendered:
        timing += f", render;dur={making * 1000:.2f}"
    response["Server-Timing"] = timing
    return response


@login_required
def item_action(request: HttpRequest, fixture_id: int, item_id: int, action: str) -> HttpResponse:
    """accept / merge / dismiss / task: one service each; the fragment comes back refreshed."""
    fixture = _fixture(request, fixture_id)
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    page = _page(request)
    if page is None:
        return _not_a_page()
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
        return _panel(request, fixture, page, f"{error.field}: {error.message}")
    return _panel(request, fixture, page)


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
