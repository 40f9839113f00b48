import hashlib
import json

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.contrib.staticfiles import finders
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.templatetags.static import static
from django.urls import reverse
from django.utils.cache import patch_cache_control
from django.utils.translation import gettext as _

from safeground.accounts.permissions import (
    can_act_on_log,
    can_assign_posts,
    can_open_control_room,
    can_open_steward_page,
    can_send_broadcast,
    can_sign_log,
    can_write_log,
    require,
)
from safeground.matches.models import Fixture
from safeground.matches.selectors import fixture_for, fixture_zone_uses
from safeground.venues.models import natural_key
from safeground.venues.selectors import ground_plan

from .checkpoints import checkpoint_read, checkpoints_document
from .control_room_words import control_room_words
from .models import Broadcast, LogCheckpoint, LogEntry
from .panels import (
    control_room_banners,
    control_room_map_panels,
    control_room_panels,
    steward_banners,
    steward_panels,
)
from .selectors import (
    assignable_people,
    categories,
    checkpoint_rows,
    fixture_for_checkpoints,
    steward_post,
    steward_posts,
)
from .steward import last_seq, post_blocks, post_place, steward_categories, steward_log
from .steward_words import steward_words


@login_required
def control_room(request: HttpRequest, fixture_id: int) -> HttpResponse:
    """The live log and map of one match: the control room's, and the police's, one picture."""
    fixture = fixture_for(request.user, fixture_id)
    require(can_open_control_room(request.user, fixture))
    user = request.user
    may = {
        "write": can_write_log(user, fixture),
        "assign": can_act_on_log(user, fixture, "assign"),
        "escalate": can_act_on_log(user, fixture, "escalate"),
        "status": can_act_on_log(user, fixture, "status"),
        "correct": can_act_on_log(user, fixture, "correct"),
        "broadcast": can_send_broadcast(user, fixture),
        "post": can_assign_posts(user, fixture),
        "sign": can_sign_log(user, fixture),
    }
    config = {
        "fixtureId": fixture.pk,
        # Every time the script draws is on the ground's clock, whatever the browser's zone.
        "timeZone": settings.TIME_ZONE,
        # A phone's clock off by this much, or a report sent this late, is marked (ADR 0026).
        "clockMarkSeconds": settings.SAFEGROUND_DEVICE_CLOCK_MARK_SECONDS,
        "userName": str(user),
        "logUrl": reverse("api:log_list", args=[fixture.pk]),
        "appendUrl": reverse("api:log_append", args=[fixture.pk]),
        "may": may,
        "levels": dict(LogEntry.Level.choices),
        "people": assignable_people(fixture) if may["assign"] or may["post"] else [],
        "broadcastsUrl": reverse("api:broadcast_list", args=[fixture.pk]),
        "broadcastSendUrl": reverse("api:broadcast_send", args=[fixture.pk]),
        "postUrl": reverse("api:post_assign", args=[fixture.pk]),
        "countsUrl": reverse("api:entry_counts", args=[fixture.pk]),
        "checkpointUrl": reverse("api:log_checkpoint_make", args=[fixture.pk]),
        "words": control_room_words(),
    }
    plan = ground_plan(fixture.ground, zone_uses=fixture_zone_uses(fixture))
    return render(
        request,
        "incidents/control_room.html",
        {
            "fixture": fixture,
            "plan": plan,
            "categories": categories(),
            "config": config,
            "may": may,
            "blocks": plan.blocks,
            "scripts": Broadcast.Script.choices,
            "posts": steward_posts(fixture),
            "panels": control_room_panels(user, fixture),
            "banners": control_room_banners(user, fixture),
            "map_panels": control_room_map_panels(user, fixture),
        },
    )


# The files the steward page needs offline (base.html's and its own). Bump STEWARD_SW_VERSION when
# the service worker's own logic changes; a change to any of these files renews the cache anyway.
STEWARD_SW_VERSION = 2
STEWARD_ASSETS = [
    "safeground/safeground-1.css",
    "safeground/favicon-1.svg",
    "vendor/htmx-2.0.11.min.js",
    "safeground/htmx-requests-1.js",
    "safeground/tables-1.js",
    "safeground/steward-1.js",
    "safeground/outbox-1.js",
    "safeground/live-1.js",
    "safeground/api-1.js",
]


def _steward_fixture(request: HttpRequest, fixture_id: int) -> Fixture:
    fixture = fixture_for(request.user, fixture_id)
    require(can_open_steward_page(request.user, fixture))
    return fixture


@login_required
def steward_page(request: HttpRequest, fixture_id: int) -> HttpResponse:
    """A steward's phone: their post, quick reports (kept in an outbox when offline) and what
    became of them, their tasks, and the control room's broadcasts over everything else."""
    fixture = _steward_fixture(request, fixture_id)
    user = request.user
    post = steward_post(fixture, user)
    common, more = steward_categories()
    # The seq first: an entry appended while the log is read comes again live, never is missed.
    since = last_seq(fixture)
    mine = steward_log(fixture, user)
    config = {
        "fixtureId": fixture.pk,
        "username": user.get_username(),
        "userName": str(user),
        "timeZone": settings.TIME_ZONE,
        "post": post_place(post),
        "appendUrl": reverse("api:log_append", args=[fixture.pk]),
        "broadcastsUrl": reverse("api:broadcast_list", args=[fixture.pk]),
        "apiBase": f"/api/fixtures/{fixture.pk}",
        "serviceWorker": reverse("steward_service_worker", args=[fixture.pk]),
        "scope": reverse("steward_page", args=[fixture.pk]),
        "tasks": mine.tasks,
        "reports": mine.reports,
        "lastSeq": since,
        "words": steward_words([*common, *more]),
    }
    return render(
        request,
        "incidents/steward.html",
        {
            "fixture": fixture,
            "post": post,
            "place": config["post"],
            "blocks": post_blocks(post),
            "all_blocks": (
                sorted(fixture.ground.blocks.all(), key=lambda b: natural_key(b.code))
                if post is None
                else []
            ),
            "common_categories": common,
            "more_categories": more,
            "config": config,
            "panels": steward_panels(user, fixture),
            "banners": steward_banners(user, fixture),
        },
    )


def _asset_urls() -> list[str]:
    """Each asset by its {% static %} URL and by its plain name (what `import "./x.js"` asks
    for when the storage adds hashes to names)."""
    urls: list[str] = []
    for name in STEWARD_ASSETS:
        for url in (static(name), f"{settings.STATIC_URL}{name}"):
            url = url if url.startswith("/") else f"/{url}"
            if url not in urls:
                urls.append(url)
    return urls


def _assets_digest() -> str:
    digest = hashlib.sha256(str(STEWARD_SW_VERSION).encode())
    for name in STEWARD_ASSETS:
        found = finders.find(name)
        if isinstance(found, str):
            with open(found, "rb") as source:
                digest.update(source.read())
    return digest.hexdigest()[:12]


@login_required
def steward_service_worker(request: HttpRequest, fixture_id: int) -> HttpResponse:
    """The steward page's service worker: its scope is the page's folder, so it needs no
    Service-Worker-Allowed header. It keeps the page and its files so the page opens offline."""
    fixture = _steward_fixture(request, fixture_id)
    page_url = reverse("steward_page", args=[fixture.pk])
    context = {
        "cache_prefix": json.dumps(f"safeground-steward-{fixture.pk}-"),
        "cache_name": json.dumps(
            f"safeground-steward-{fixture.pk}-v{STEWARD_SW_VERSION}-{_assets_digest()}"
        ),
        "page_url": json.dumps(page_url),
        "assets": json.dumps(_asset_urls()),
        "static_url": json.dumps(settings.STATIC_URL),
    }
    response = render(
        request,
        "incidents/steward_sw.js",
        context,
        content_type="application/javascript; charset=utf-8",
    )
    # The browser checks for a new worker on each visit; never let a cache answer for it.
    patch_cache_control(response, no_cache=True, private=True)
    return response


@login_required
def log_checkpoints(request: HttpRequest, fixture_id: int) -> HttpResponse:
    """The match's signed checkpoints of its log, for each organisation working it to download
    and keep: its copy is what shows, later, that the club's log was not cut or rewritten."""
    fixture = fixture_for_checkpoints(request.user, fixture_id)
    return render(
        request,
        "incidents/checkpoints.html",
        {"fixture": fixture, "checkpoints": checkpoint_rows(fixture)},
    )


def _attachment(data: dict, filename: str) -> HttpResponse:
    response = JsonResponse(data, json_dumps_params={"indent": 2, "sort_keys": True})
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@login_required
def log_checkpoints_download(request: HttpRequest, fixture_id: int) -> HttpResponse:
    """Every checkpoint of the match in one file (verify-log --checkpoints reads it)."""
    fixture = fixture_for_checkpoints(request.user, fixture_id)
    return _attachment(
        checkpoints_document(fixture), f"safeground-match-{fixture.pk}-checkpoints.json"
    )


@login_required
def log_checkpoint_download(request: HttpRequest, fixture_id: int, entries: int) -> HttpResponse:
    """One checkpoint, as its file in the checkpoint folder."""
    fixture = fixture_for_checkpoints(request.user, fixture_id)
    checkpoint = LogCheckpoint.objects.filter(fixture=fixture, entries=entries).first()
    if checkpoint is None:
        raise Http404(_("no checkpoint of #%(entries)s") % {"entries": entries})
    return _attachment(
        checkpoint_read(checkpoint).to_json(),
        f"safeground-match-{fixture.pk}-checkpoint-{entries:06d}.json",
    )
