"""The gates' API: `POST /api/entry/scan` from a turnstile or scanner, and a match's counts.

The scan route is the hot path (≥ 2,000 scans/s): the body is read with `json.loads` and checked
by hand (no schema object per request), the device key is checked against a short in-process
cache (entry/runtime/lookups.py), and the decision is one SQL statement (entry/decision.py).
"""

import json
from datetime import datetime
from typing import Annotated, Any, Literal
from uuid import UUID

from django.http import HttpRequest, HttpResponse
from django.utils.translation import gettext as _
from ninja import Field, Query, Router, Schema
from ninja.security import django_auth

from safeground.accounts.devices import DeviceKey
from safeground.errors import NulCharacter, SafegroundError
from safeground.request_body import Body

from . import rules
from .bundle import bundle_for, public_key_json
from .models import Scan
from .runtime import lookups
from .runtime.loop import scan_decide_async
from .scans import (
    MAX_OFFLINE_SCANS,
    ScanError,
    ScanResult,
    offline_scans_upload,
    scan_decide,
)
from .selectors import entry_counts_for

router = Router(tags=["entry"])


class CachedDeviceKey(DeviceKey):
    """`X-Device-Key`, with the device kept a few seconds in the process
    (SAFEGROUND_ENTRY_CACHE_SECONDS): a revoked key stops working within that time."""

    def find(self, key: str) -> Any:
        return lookups.device_for_key(key)

    def profile_label(self, device: Any) -> str:
        return str(device.profile_label)


class ScanIn(Body):
    barcode: str = Field(
        pattern=rules.BARCODE_PATTERN,
        description="as read from the ticket: 1 to 64 printable ASCII characters, no spaces",
    )
    turnstile: str = Field(
        min_length=1, max_length=20, description="the turnstile's code at its ground, e.g. F03"
    )
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


SCAN_FIELDS = frozenset(ScanIn.model_fields)
SCAN_BODY = {
    "requestBody": {
        "required": True,
        "content": {"application/json": {"schema": ScanIn.model_json_schema()}},
    }
}


def _field(data: dict[str, Any], name: str, default: str | None = None) -> str:
    value = data.get(name, default)
    if not isinstance(value, str):
        raise ScanError(
            name, _("is required (a string)") if value is None else _("must be a string")
        )
    if "\x00" in value:  # the lean route passes no middleware (safeground.errors.RequestChecks)
        raise NulCharacter(name, _("must not contain a NUL character"))
    return value


def scan_input(body: bytes) -> dict[str, Any]:
    """The scan's fields, typed; ScanError naming the first field that is wrong."""
    try:
        data = json.loads(body)
    except ValueError:
        raise ScanError("body", _("must be a JSON object")) from None
    if not isinstance(data, dict):
        raise ScanError("body", _("must be a JSON object"))
    undeclared = data.keys() - SCAN_FIELDS
    if undeclared:  # as the schema says (`additionalProperties: false`; request_body.Body)
        raise ScanError(min(undeclared), _("is not a field of this request"))
    try:
        scanned_at = datetime.fromisoformat(_field(data, "scanned_at").replace("Z", "+00:00"))
    except ValueError:
        raise ScanError("scanned_at", _("must be an ISO 8601 time")) from None
    try:
        nonce = UUID(_field(data, "nonce"))
    except ValueError:
        raise ScanError("nonce", _("must be a UUID")) from None
    return {
        "barcode": _field(data, "barcode"),
        "turnstile": _field(data, "turnstile"),
        "scanned_at": scanned_at,
        "nonce": nonce,
        "direction": _field(data, "direction", "in"),
    }


def scan_answer(device: lookups.DeviceInfo, body: bytes) -> tuple[int, bytes]:
    """The status and JSON body for one scan: the ninja route and the lean ASGI route's threads
    (entry/runtime/asgi.py) answer with this."""
    try:
        result = scan_decide(device=device, **scan_input(body))
    except (ScanError, NulCharacter) as error:
        return _refused(error)
    return _answered(result)


async def scan_answer_async(device: lookups.DeviceInfo, body: bytes) -> tuple[int, bytes]:
    """scan_answer on the event loop (the lean route on PostgreSQL); lookups.NotCached when the
    scan must go to a thread (runtime.loop.scan_decide_async)."""
    try:
        result = await scan_decide_async(device=device, **scan_input(body))
    except (ScanError, NulCharacter) as error:
        return _refused(error)
    return _answered(result)


def _refused(error: SafegroundError) -> tuple[int, bytes]:
    return error.status, json.dumps(error.to_json()).encode()


def _answered(result: ScanResult) -> tuple[int, bytes]:
    return 200, json.dumps(result.to_json()).encode()


@router.post(
    "/entry/scan",
    auth=CachedDeviceKey(),
    url_name="entry_scan",
    response={200: ScanOut},
    openapi_extra=SCAN_BODY,
)
def entry_scan(request: HttpRequest) -> HttpResponse:
    """Admit or deny one scan: `decision`, a stable `reason` code (banned, already_inside,
    wrong_end, wrong_match, cancelled, unknown_ticket, flagged) and a `message` for the steward.
    Every well-formed scan is stored, refused ones too; a nonce sent again returns the first
    decision. Malformed input is a 400 naming the field, and stores nothing."""
    status, body = scan_answer(request.auth, request.body)  # type: ignore[attr-defined]
    return HttpResponse(body, status=status, content_type="application/json")


class BundleDeviceKey(CachedDeviceKey):
    """The bundle and the key that signs it are one permission: `entry_bundle`."""

    route = "entry_bundle"


class BundleOut(Schema):
    payload: str = Field(description="base64url (no padding) of the payload's canonical JSON")
    signature: str = Field(description="base64url Ed25519 signature over the payload's bytes")
    key_id: str = Field(description="first 16 hex digits of the SHA-256 of the public key")


class BundleKeyOut(Schema):
    key_id: str
    public_key: str = Field(description="base64url of the raw 32-byte Ed25519 public key")


@router.get(
    "/entry/bundle",
    auth=BundleDeviceKey(),
    url_name="entry_bundle",
    response={200: BundleOut},
)
def entry_bundle(
    request: HttpRequest, turnstile: str = Query(..., min_length=1, max_length=20)
) -> Any:
    """The signed offline bundle for a turnstile: the match it works now (or next, when entry
    opens within SAFEGROUND_ENTRY_OPENS_HOURS), its tickets as keyed hashes with their end,
    state and seat, and the gate's ends. No names, dates of birth or barcodes."""
    return bundle_for(device=request.auth, turnstile=turnstile).to_json()  # type: ignore[attr-defined]


@router.get(
    "/entry/bundle-key", auth=BundleDeviceKey(), url_name="entry_bundle_key", response=BundleKeyOut
)
def entry_bundle_key(request: HttpRequest) -> dict[str, str]:
    """The public key bundles are signed with, and its id (as in each bundle's `key_id`)."""
    return public_key_json()


class OfflineAdmitIn(ScanIn):
    decision: Literal["admit"] = Field(description="the scanner admitted the holder offline")
    reason: None = Field(description="null: an admission has no reason")


class OfflineDenyIn(ScanIn):
    decision: Literal["deny"] = Field(description="the scanner refused the holder offline")
    reason: Scan.Reason = Field(description="why (its reason code)")


class OfflineScansIn(Body):
    scans: list[Annotated[OfflineAdmitIn | OfflineDenyIn, Field(discriminator="decision")]] = Field(
        min_length=1, max_length=MAX_OFFLINE_SCANS
    )


class OfflineResultOut(Schema):
    nonce: UUID
    decision: Literal["admit", "deny"]
    reason: Scan.Reason | None
    conflict: bool = Field(description="another admission of the ticket: the earlier stands")
    replayed: bool = Field(description="this nonce was uploaded before; nothing stored")


class OfflineScansOut(Schema):
    results: list[OfflineResultOut]


@router.post(
    "/entry/offline-scans",
    auth=CachedDeviceKey(),
    url_name="entry_offline_scans",
    response={200: OfflineScansOut},
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": OfflineScansIn.model_json_schema()}},
        }
    },
)
def entry_offline_scans(request: HttpRequest) -> dict[str, Any]:
    """Scans a scanner decided offline, uploaded in the order made (1 to 500). Checked whole
    first (a bad one is a 400 naming `scans[i].field`, and nothing is stored), then stored in one
    transaction, first scan wins by time scanned: a ticket admitted twice is a conflict raised in
    the control room. A nonce uploaded before is answered `replayed` and stored once."""
    try:
        data = json.loads(request.body)
    except ValueError:
        raise ScanError("body", _("must be a JSON object")) from None
    results = offline_scans_upload(device=request.auth, data=data)  # type: ignore[attr-defined]
    return {"results": [result.to_json() for result in results]}


@router.get("/fixtures/{fixture_id}/entry/counts", auth=django_auth, url_name="entry_counts")
def entry_counts(request: HttpRequest, fixture_id: int) -> dict[str, Any]:
    """Admitted per gate, stand and zone against capacity; denials by reason; the "prevented
    from attending" figure; capacity warnings. For anyone who may open the match's control room."""
    return entry_counts_for(request.user, fixture_id)
