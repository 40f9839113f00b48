"""The log API: append, list (cursor by seq, filters) and act on entries of one match."""

from datetime import datetime
from typing import Any, Literal

from django.contrib.auth import get_user_model
from django.http import FileResponse, HttpRequest
from django.utils.translation import gettext as _
from ninja import Field, File, Query, Router, Schema, Status, UploadedFile
from ninja.security import django_auth
from pydantic import ConfigDict, JsonValue

from safeground.accounts.permissions import (
    can_acknowledge_broadcast,
    can_act_on_log,
    can_assign_posts,
    can_open_control_room,
    can_open_steward_page,
    can_read_log,
    can_send_broadcast,
    can_sign_log,
    can_write_log,
    require,
)
from safeground.errors import answers, erased_by_retention, said
from safeground.live.viewers import viewer_for
from safeground.matches.models import Fixture
from safeground.matches.selectors import fixture_for, fixture_for_report
from safeground.request_body import Body

from . import broadcasting, photos, posts, services
from .catch_up import log_after
from .checkpoints import checkpoint_read, checkpoints_for
from .models import Broadcast, LogCheckpoint, LogEntry, Photo
from .selectors import (
    broadcast_json,
    broadcasts,
    entry_json,
    fixture_for_checkpoints,
    logged_entry_audience,
    post_label,
)

router = Router(tags=["log"], auth=django_auth)


# Stated for clients, checked by the service: rows are a block's.
ROWS_NEED_A_BLOCK: list[JsonValue] = [
    {
        "if": {"required": [row], "properties": {row: {"pattern": said()}}},
        "then": {
            "required": ["block"],
            "properties": {"block": {"type": "string", "pattern": said()}},
        },
    }
    for row in ("first_row", "last_row")
]


class EntryIn(Body):
    category: str = Field(min_length=1, max_length=40)
    text: str = Field("", max_length=services.MAX_TEXT)
    severity: int | None = Field(None, ge=1, le=5)
    observed_at: datetime | None = Field(
        None, description="when it was seen, on the reporting device's clock; now if not given"
    )
    sent_at: datetime | None = Field(
        None,
        description=(
            "the device's clock as it sends this request (read again at each retry): how far"
            " its clock is off, to correct observed_at by (ADR 0026)"
        ),
    )
    block: str = Field("", max_length=20)
    first_row: str = Field("", max_length=10)
    last_row: str = Field("", max_length=10)
    zone: str = Field("", max_length=40)
    gate: str = Field("", max_length=20)
    concourse: str = Field("", max_length=20)
    outside: str = Field("", max_length=200)
    links: list[int] = []
    idempotency_key: str = Field("", max_length=80)
    home_only: bool = False

    # Stated for clients, checked by the service: a report is somewhere, and its rows are a
    # block's.
    model_config = ConfigDict(
        json_schema_extra={
            "anyOf": [
                {"required": [name], "properties": {name: {"pattern": said()}}}
                for name in ("block", "zone", "gate", "concourse", "outside")
            ],
            "allOf": ROWS_NEED_A_BLOCK,
        }
    )


class AssignIn(Body):
    assignee: str = Field(min_length=1, description="username of the steward or supervisor")
    note: str = Field("", max_length=services.MAX_TEXT)


class EscalateIn(Body):
    to: LogEntry.Level
    note: str = Field("", max_length=services.MAX_TEXT)


class StatusIn(Body):
    status: Literal["resolved", "closed", "open"] = Field(description="open: reopen it")
    note: str = Field("", max_length=services.MAX_TEXT)


class CorrectIn(Body):
    note: str = Field(
        max_length=services.MAX_TEXT, pattern=said(), description="why the entry is corrected"
    )
    text: str | None = Field(None, max_length=services.MAX_TEXT)
    category: str | None = Field(None, min_length=1, max_length=40)
    severity: int | None = Field(None, ge=1, le=5)
    block: str | None = Field(None, pattern=said(), description="the corrected place")
    first_row: str = ""
    last_row: str = ""

    # A correction corrects something (stated for clients, checked by the service).
    model_config = ConfigDict(
        json_schema_extra={
            "anyOf": [
                {
                    "required": ["text"],
                    "properties": {"text": {"type": "string", "pattern": said()}},
                },
                {"required": ["category"], "properties": {"category": {"type": "string"}}},
                {"required": ["severity"], "properties": {"severity": {"type": "integer"}}},
                {"required": ["block"], "properties": {"block": {"type": "string"}}},
            ],
            "allOf": ROWS_NEED_A_BLOCK,
        }
    )


class LogPage(Schema):
    entries: list[dict[str, Any]]
    next_after: int | None


def _place(payload: Any) -> services.Place:
    return services.Place(
        block=payload.block or "",
        first_row=payload.first_row,
        last_row=payload.last_row,
        zone=getattr(payload, "zone", ""),
        gate=getattr(payload, "gate", ""),
        concourse=getattr(payload, "concourse", ""),
        outside=getattr(payload, "outside", ""),
    )


def _entry_in(fixture: Fixture, entry_id: int) -> LogEntry:
    entry = (
        LogEntry.objects.select_related("fixture__ground", "concerns").filter(pk=entry_id).first()
    )
    if entry is None:
        raise services.LogEntryNotFound(
            "entry_id", _("no log entry %(entry)s") % {"entry": entry_id}
        )
    if entry.fixture_id != fixture.pk:
        raise services.LogEntryNotFound(
            "entry_id",
            _("entry %(entry)s belongs to another match") % {"entry": entry_id},
        )
    return entry


@router.post(
    "/fixtures/{fixture_id}/log",
    response={201: dict[str, Any]},
    url_name="log_append",
    openapi_extra=answers(services.IdempotencyConflict),
)
def log_append(request: HttpRequest, fixture_id: int, payload: EntryIn) -> Status[Any]:
    """Append a report. An idempotency key is its author's own: the same report sent again with
    it stores one entry (and answers with it); a different report with it is a 409."""
    fixture = fixture_for_report(request.user, fixture_id)
    require(can_write_log(request.user, fixture))
    entry = services.log_entry_append(
        fixture=fixture,
        author=request.user,  # type: ignore[arg-type]
        category=payload.category,
        text=payload.text,
        severity=payload.severity,
        observed_at=payload.observed_at,
        sent_at=payload.sent_at,
        place=_place(payload),
        links=payload.links,
        idempotency_key=payload.idempotency_key,
        home_only=payload.home_only,
    )
    return Status(201, entry_json(entry))


@router.get("/fixtures/{fixture_id}/log", response=LogPage, url_name="log_list")
def log_list(
    request: HttpRequest,
    fixture_id: int,
    after: int = Query(0, ge=0, le=2**63 - 1, description="the last seq seen; 0 for the first"),
    limit: int = Query(100, ge=1, le=500),
    category: str = "",
    min_severity: int = Query(0, ge=0, le=5),
    zone: str = "",
    status: str = "",
) -> LogPage:
    """Entries after the cursor `after` (a seq), oldest first; filters apply to the incident."""
    fixture = fixture_for(request.user, fixture_id)
    require(can_read_log(request.user, fixture))
    zone_id = fixture.ground.zones.filter(code=zone).values_list("id", flat=True).first()
    entries: list[dict[str, Any]] = []
    next_after = None
    # The socket's rule for who sees what (selectors.visible_log); filters apply to each incident
    # as it stands now, not as it stood at each entry.
    seen = log_after(
        fixture_id=fixture.pk, viewer=viewer_for(request.user, fixture), after_seq=after
    )
    for entry, state in seen:
        if category and state.category != category:
            continue
        if min_severity and (state.severity or 0) < min_severity:
            continue
        if zone and zone_id not in state.zone_ids:
            continue
        if status and state.status != status:
            continue
        if len(entries) == limit:
            next_after = entries[-1]["seq"]
            break
        entries.append(entry_json(entry) | {"incident_status": state.status})
    return LogPage(entries=entries, next_after=next_after)


def _act(
    request: HttpRequest, fixture_id: int, entry_id: int, action: str
) -> tuple[Fixture, LogEntry]:
    fixture = fixture_for(request.user, fixture_id)
    entry = _entry_in(fixture, entry_id)
    require(can_act_on_log(request.user, fixture, action, author_id=entry.author_id))
    return fixture, entry


ACTION_RESPONSES = {200: dict[str, Any]}


@router.post(
    "/fixtures/{fixture_id}/log/{entry_id}/assign", response=ACTION_RESPONSES, url_name="log_assign"
)
def log_assign(request: HttpRequest, fixture_id: int, entry_id: int, payload: AssignIn) -> Any:
    fixture, entry = _act(request, fixture_id, entry_id, "assign")
    assignee = (
        get_user_model()
        .objects.filter(
            username=payload.assignee, memberships__organisation=fixture.ground.organisation
        )
        .first()
    )
    if assignee is None:
        raise services.LogEntryNotFound(
            "assignee", _("no one called '%(name)s' at the club") % {"name": payload.assignee}
        )
    return entry_json(
        services.log_entry_assign(
            entry=entry,
            author=request.user,  # type: ignore[arg-type]
            assignee=assignee,
            note=payload.note,
        )
    )


@router.post(
    "/fixtures/{fixture_id}/log/{entry_id}/escalate",
    response=ACTION_RESPONSES,
    url_name="log_escalate",
)
def log_escalate(request: HttpRequest, fixture_id: int, entry_id: int, payload: EscalateIn) -> Any:
    _, entry = _act(request, fixture_id, entry_id, "escalate")
    return entry_json(
        services.log_entry_escalate(
            entry=entry,
            author=request.user,  # type: ignore[arg-type]
            to=payload.to,
            note=payload.note,
        )
    )


@router.post(
    "/fixtures/{fixture_id}/log/{entry_id}/status", response=ACTION_RESPONSES, url_name="log_status"
)
def log_status(request: HttpRequest, fixture_id: int, entry_id: int, payload: StatusIn) -> Any:
    _, entry = _act(request, fixture_id, entry_id, "status")
    return entry_json(
        services.log_entry_set_status(
            entry=entry,
            author=request.user,  # type: ignore[arg-type]
            status=payload.status,
            note=payload.note,
        )
    )


@router.post(
    "/fixtures/{fixture_id}/log/{entry_id}/correct",
    response=ACTION_RESPONSES,
    url_name="log_correct",
)
def log_correct(request: HttpRequest, fixture_id: int, entry_id: int, payload: CorrectIn) -> Any:
    _, entry = _act(request, fixture_id, entry_id, "correct")
    place = None
    if payload.block is not None:
        place = services.Place(
            block=payload.block, first_row=payload.first_row, last_row=payload.last_row
        )
    return entry_json(
        services.log_entry_correct(
            entry=entry,
            author=request.user,  # type: ignore[arg-type]
            note=payload.note,
            text=payload.text,
            category=payload.category,
            severity=payload.severity,
            place=place,
        )
    )


class TaskIn(Body):
    task: LogEntry.Task


@router.post(
    "/fixtures/{fixture_id}/log/{entry_id}/task", response=ACTION_RESPONSES, url_name="log_task"
)
def log_task(request: HttpRequest, fixture_id: int, entry_id: int, payload: TaskIn) -> Any:
    """The assignee accepts a task, then reports it done."""
    fixture = fixture_for(request.user, fixture_id)
    require(can_write_log(request.user, fixture))
    entry = _entry_in(fixture, entry_id)
    return entry_json(
        services.log_entry_task(
            entry=entry,
            author=request.user,  # type: ignore[arg-type]
            task=payload.task,
        )
    )


@router.post(
    "/fixtures/{fixture_id}/log/{entry_id}/photo",
    response={201: dict[str, Any]},
    url_name="log_photo",
    # The photo part's own type, which the service checks against the file's first bytes.
    openapi_extra={
        "requestBody": {
            "content": {
                "multipart/form-data": {
                    "encoding": {"photo": {"contentType": ", ".join(sorted(photos.PHOTO_TYPES))}}
                }
            }
        }
    },
)
def log_photo(
    request: HttpRequest, fixture_id: int, entry_id: int, photo: File[UploadedFile]
) -> Status[Any]:
    """Attach a photo (JPEG, PNG or WebP, at most 10 MB) to an entry; stored with its SHA-256."""
    fixture = fixture_for(request.user, fixture_id)
    require(can_write_log(request.user, fixture))
    entry = _entry_in(fixture, entry_id)
    stored = photos.log_entry_photo_add(
        entry=entry,
        author=request.user,  # type: ignore[arg-type]
        upload=photo,
    )
    return Status(201, {"id": stored.pk, "sha256": stored.sha256, "size": stored.size})


@router.get(
    "/fixtures/{fixture_id}/log/{entry_id}/photos/{photo_id}",
    response={200: None},
    url_name="log_photo_file",
)
def log_photo_file(
    request: HttpRequest, fixture_id: int, entry_id: int, photo_id: int
) -> FileResponse:
    """A photo of an entry, for whoever may see that entry (a steward: their zones' and tasks')."""
    fixture = fixture_for(request.user, fixture_id)
    require(can_read_log(request.user, fixture))
    entry = _entry_in(fixture, entry_id)
    require(logged_entry_audience(entry).admits(viewer_for(request.user, fixture)))
    photo = Photo.objects.filter(pk=photo_id, entry=entry).first()
    if photo is None:
        raise services.LogEntryNotFound(
            "photo_id",
            _("no photo %(photo)s on entry %(entry)s") % {"photo": photo_id, "entry": entry_id},
        )
    if photo.erased_at is not None:
        raise services.LogEntryError(
            "photo_id",
            erased_by_retention(
                _("photo %(photo)s") % {"photo": photo_id}, photo.erased_at, photo.sha256
            ),
        )
    response = FileResponse(photo.image.open("rb"), content_type=photo.content_type)
    response["Cache-Control"] = "private, max-age=3600"  # a stored photo never changes
    return response


class PostIn(Body):
    steward: str = Field(min_length=1, description="username of the steward or supervisor")
    zone: str = ""
    gate: str = ""
    concourse: str = ""

    # A post is exactly one place (stated for clients, checked by the service).
    model_config = ConfigDict(
        json_schema_extra={
            "oneOf": [
                {"required": [name], "properties": {name: {"pattern": said()}}}
                for name in ("zone", "gate", "concourse")
            ]
        }
    )


@router.post(
    "/fixtures/{fixture_id}/posts",
    response={201: dict[str, Any]},
    url_name="post_assign",
)
def post_assign(request: HttpRequest, fixture_id: int, payload: PostIn) -> Status[Any]:
    """Put a steward at a zone, gate or concourse for this match."""
    fixture = fixture_for(request.user, fixture_id)
    require(can_assign_posts(request.user, fixture))
    steward = get_user_model().objects.filter(username=payload.steward).first()
    if steward is None:
        raise services.LogEntryNotFound(
            "steward", _("no one called '%(name)s'") % {"name": payload.steward}
        )
    post = posts.steward_post_assign(
        fixture=fixture,
        steward=steward,
        assigned_by=request.user,  # type: ignore[arg-type]
        zone=payload.zone,
        gate=payload.gate,
        concourse=payload.concourse,
    )
    return Status(201, {"steward": steward.username, "post": post_label(post)})


class BroadcastIn(Body):
    script: Broadcast.Script
    text: str = Field("", max_length=500)
    zone: str = ""


@router.post(
    "/fixtures/{fixture_id}/broadcasts",
    response={201: dict[str, Any]},
    url_name="broadcast_send",
)
def broadcast_send(request: HttpRequest, fixture_id: int, payload: BroadcastIn) -> Status[Any]:
    """An urgent message to every steward of the match, or to one zone's."""
    fixture = fixture_for(request.user, fixture_id)
    require(can_send_broadcast(request.user, fixture))
    sent = broadcasting.broadcast_send(
        fixture=fixture,
        sent_by=request.user,  # type: ignore[arg-type]
        script=payload.script,
        text=payload.text,
        zone=payload.zone,
    )
    return Status(201, broadcast_json(sent))


@router.get(
    "/fixtures/{fixture_id}/broadcasts", response=list[dict[str, Any]], url_name="broadcast_list"
)
def broadcast_list(request: HttpRequest, fixture_id: int) -> list[dict[str, Any]]:
    """Broadcasts of the match, newest first, with who has and has not acknowledged."""
    fixture = fixture_for(request.user, fixture_id)
    require(
        can_open_control_room(request.user, fixture) or can_open_steward_page(request.user, fixture)
    )
    return broadcasts(fixture)


@router.post(
    "/fixtures/{fixture_id}/broadcasts/{broadcast_id}/ack",
    response={200: dict[str, Any]},
    url_name="broadcast_ack",
)
def broadcast_ack(request: HttpRequest, fixture_id: int, broadcast_id: int) -> Any:
    fixture = fixture_for(request.user, fixture_id)
    found = Broadcast.objects.filter(pk=broadcast_id, fixture=fixture).first()
    if found is None:
        raise services.LogEntryNotFound(
            "broadcast_id",
            _("no broadcast %(broadcast)s in this match") % {"broadcast": broadcast_id},
        )
    require(can_acknowledge_broadcast(request.user, fixture, found.recipient_ids))
    broadcasting.broadcast_ack(broadcast=found, user=request.user)  # type: ignore[arg-type]
    return {"broadcast": found.pk, "acknowledged": True}


@router.get(
    "/fixtures/{fixture_id}/log/checkpoints",
    response=list[dict[str, Any]],
    url_name="log_checkpoints",
)
def log_checkpoints(request: HttpRequest, fixture_id: int) -> list[dict[str, Any]]:
    """The match's signed checkpoints of its log, oldest first, each as its file (for a sharing
    organisation's systems to fetch and keep; `safeground verify-log --checkpoints` reads them)."""
    return checkpoints_for(fixture_for_checkpoints(request.user, fixture_id))


class CheckpointIn(Body):
    full_time: bool = Field(False, description="the match is over: mark the checkpoint full time")


@router.post(
    "/fixtures/{fixture_id}/log/checkpoints",
    response={201: dict[str, Any]},
    url_name="log_checkpoint_make",
)
def log_checkpoint_make(
    request: HttpRequest, fixture_id: int, payload: CheckpointIn
) -> Status[Any]:
    """Sign the log's head now (at full time, or whenever the control room wants one)."""
    fixture = fixture_for(request.user, fixture_id)
    require(can_sign_log(request.user, fixture))
    reason = (
        LogCheckpoint.Reason.FULL_TIME if payload.full_time else LogCheckpoint.Reason.ON_REQUEST
    )
    checkpoint = services.log_checkpoint_make(fixture=fixture, reason=reason)
    return Status(201, checkpoint_read(checkpoint).to_json())
