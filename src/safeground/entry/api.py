"""The gates' API: `POST /api/entry/scan` from a turnstile or scanner, and a match's counts.

The scan route is the hot path (≥ 2,000 scans/s): the body is read with `json.loads` and checked
by hand (no schema object per request), the device key is checked against a short in-process
cache (entry/lookups.py), and the decision is one SQL statement (entry/decisions.py).
"""

import json
from datetime import datetime
from typing import Any, Literal
from uuid import UUID

from django.http import HttpRequest, HttpResponse
from ninja import Field, Router, Schema
from ninja.security import django_auth

from safeground.accounts.devices import DeviceKey

from . import lookups
from .models import Scan
from .selectors import entry_counts_for
from .services import ScanError, ScanResult, scan_decide, scan_decide_async

router = Router(tags=["entry"])


class CachedDeviceKey(DeviceKey):
    """`X-Device-Key`, with the device kept a few seconds in the process
    (SAFEGROUND_ENTRY_CACHE_SECONDS): a revoked key stops working within that time."""

    def find(self, key: str) -> Any:
        return lookups.device_for_key(key)

    def profile_label(self, device: Any) -> str:
        return str(device.profile_label)


class ScanIn(Schema):
    barcode: str = Field(max_length=64, description="as read from the ticket")
    turnstile: str = Field(description="the turnstile's code at its ground, e.g. F03")
    scanned_at: datetime = Field(description="when it was scanned (ISO 8601 with time zone)")
    nonce: UUID = Field(description="the scanner's id for this scan: a retry sends it again")
    direction: Literal["in", "out"] = "in"


class TicketOut(Schema):
    block: str | None
    row: str
    seat: str
    area: str
    end: str


class ScanOut(Schema):
    decision: Literal["admit", "deny"]
    reason: Scan.Reason | None = Field(description="null when admitted")
    message: str = Field(description="what the steward at the turnstile should do")
    ticket: TicketOut | None
    replayed: bool = Field(description="true: this nonce was decided before; nothing stored")


class ErrorOut(Schema):
    field: str
    detail: str


SCAN_BODY = {
    "requestBody": {
        "required": True,
        "content": {"application/json": {"schema": ScanIn.model_json_schema()}},
    }
}


def _field(data: dict[str, Any], name: str, default: str | None = None) -> str:
    value = data.get(name, default)
    if not isinstance(value, str):
        raise ScanError(name, "is required (a string)" if value is None else "must be a string")
    return value


def scan_input(body: bytes) -> dict[str, Any]:
    """The scan's fields, typed; ScanError naming the first field that is wrong."""
    try:
        data = json.loads(body)
    except ValueError:
        raise ScanError("body", "must be a JSON object") from None
    if not isinstance(data, dict):
        raise ScanError("body", "must be a JSON object")
    try:
        scanned_at = datetime.fromisoformat(_field(data, "scanned_at").replace("Z", "+00:00"))
    except ValueError:
        raise ScanError("scanned_at", "must be an ISO 8601 time") from None
    try:
        nonce = UUID(_field(data, "nonce"))
    except ValueError:
        raise ScanError("nonce", "must be a UUID") from None
    return {
        "barcode": _field(data, "barcode"),
        "turnstile": _field(data, "turnstile"),
        "scanned_at": scanned_at,
        "nonce": nonce,
        "direction": _field(data, "direction", "in"),
    }


def scan_answer(device: lookups.DeviceInfo, body: bytes) -> tuple[int, bytes]:
    """The status and JSON body for one scan: the ninja route and the lean ASGI route's threads
    (entry/asgi.py) answer with this."""
    try:
        result = scan_decide(device=device, **scan_input(body))
    except ScanError as error:
        return _refused(error)
    return _answered(result)


async def scan_answer_async(device: lookups.DeviceInfo, body: bytes) -> tuple[int, bytes]:
    """scan_answer on the event loop (the lean route on PostgreSQL); lookups.NotCached when the
    scan must go to a thread (services.scan_decide_async)."""
    try:
        result = await scan_decide_async(device=device, **scan_input(body))
    except ScanError as error:
        return _refused(error)
    return _answered(result)


def _refused(error: ScanError) -> tuple[int, bytes]:
    return 400, json.dumps({"field": error.field, "detail": error.message}).encode()


def _answered(result: ScanResult) -> tuple[int, bytes]:
    return 200, json.dumps(result.to_json()).encode()


@router.post(
    "/entry/scan",
    auth=CachedDeviceKey(),
    url_name="entry_scan",
    response={200: ScanOut, 400: ErrorOut},
    openapi_extra=SCAN_BODY,
)
def entry_scan(request: HttpRequest) -> HttpResponse:
    """Admit or deny one scan: `decision`, a stable `reason` code (banned, already_inside,
    wrong_end, wrong_match, cancelled, unknown_ticket, flagged) and a `message` for the steward.
    Every well-formed scan is stored, refused ones too; a nonce sent again returns the first
    decision. Malformed input is a 400 naming the field, and stores nothing."""
    status, body = scan_answer(request.auth, request.body)  # type: ignore[attr-defined]
    return HttpResponse(body, status=status, content_type="application/json")


@router.get("/fixtures/{fixture_id}/entry/counts", auth=django_auth, url_name="entry_counts")
def entry_counts(request: HttpRequest, fixture_id: int) -> dict[str, Any]:
    """Admitted per gate, stand and zone against capacity; denials by reason; the "prevented
    from attending" figure; capacity warnings. For anyone who may open the match's control room."""
    return entry_counts_for(request.user, fixture_id)
