"""Recording a turnstile's scans: one decided online (`scan_decide`), a scanner's offline upload
reconciled (`offline_scans_upload`, with its entry conflicts), and the answer and events each makes
(docs/adr/0005-turnstile-decision.md, 0006-offline-scanners.md). The decision itself is
entry.decision's; the words the steward reads are entry.rules'. The event loop's variant of
`scan_decide` is entry.runtime.loop.scan_decide_async.
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta
from typing import Any
from uuid import UUID

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext as _

from safeground import clock
from safeground.errors import SafegroundError
from safeground.live.catalogue import ENTRY_BANNED_ADMITTED, ENTRY_CONFLICT, ENTRY_DENIED
from safeground.live.events import Audience, publish

from . import decision, gate_pressure, rules
from .models import EntryConflict, Scan, Ticket
from .runtime import live_counts, lookups
from .selectors import banned_tickets, entry_conflicts, ticket_seat

BARCODE = re.compile(rules.BARCODE_PATTERN)
DIRECTIONS = frozenset(Scan.Direction.values)  # `.values` builds a new list at every use
Reason = Scan.Reason


class ScanError(SafegroundError):
    """A scan the gates refuse to decide; `field` names what is wrong (HTTP 400, nothing stored)."""

    code = "scan_refused"


class NoSuchTurnstile(ScanError):
    """No turnstile of that code at the device's organisation's grounds (404)."""

    status = 404


class ScannedLater(ScanError):
    """Scanned after the server's now (beyond the clock skew allowed): the scanner's clock is
    ahead; the scan is well formed, and refused by the time (409)."""

    status = 409


class SeveralTurnstiles(ScanError):
    """The code names turnstiles at several of the organisation's grounds (409)."""

    status = 409


@dataclass(frozen=True)
class ScanResult:
    decision: str
    reason: str | None
    message: str
    ticket: dict[str, Any] | None
    replayed: bool
    scan_id: int

    def to_json(self) -> dict[str, Any]:
        return {
            "decision": self.decision,
            "reason": self.reason,
            "message": self.message,
            "ticket": self.ticket,
            "replayed": self.replayed,
        }


@dataclass(frozen=True)
class CheckedScan:
    """A well-formed scan with what the decision needs: its context for the database, and the
    turnstile, gate ends and ground for the answer and the control room."""

    context: decision.ScanContext
    place: lookups.TurnstileInfo
    ends: lookups.GateEnds | None
    ground: lookups.GroundInfo


def scan_check(
    *,
    device: lookups.DeviceInfo,
    turnstile: str,
    barcode: str,
    scanned_at: datetime,
    nonce: UUID,
    direction: str = Scan.Direction.IN,
    now: datetime | None = None,
    cached_only: bool = False,
) -> CheckedScan:
    """Check a scan's fields and find its turnstile, match and gate ends; ScanError naming the
    field when it is wrong. Writes nothing. `cached_only`: from the event loop, lookups.NotCached
    when something is not in the process's caches."""
    now = now or timezone.now()
    if not BARCODE.fullmatch(barcode):
        raise ScanError("barcode", _("must be 1 to 64 printable characters, without spaces"))
    if direction not in DIRECTIONS:
        raise ScanError("direction", _("must be 'in' or 'out'"))
    if scanned_at.tzinfo is None:
        raise ScanError("scanned_at", _("must carry a time zone (e.g. 2016-10-26T19:05:00+01:00)"))
    if scanned_at > now + timedelta(seconds=settings.SAFEGROUND_CLOCK_SKEW_SECONDS):
        raise ScannedLater("scanned_at", _("is in the future: check the turnstile's clock"))
    try:
        place = lookups.turnstile_for(device.organisation_id, turnstile, cached_only=cached_only)
    except lookups.AmbiguousTurnstile:
        raise SeveralTurnstiles("turnstile", several_grounds(turnstile)) from None
    if place is None:
        raise NoSuchTurnstile("turnstile", no_turnstile(turnstile))
    fixture_id = lookups.fixture_at(place.ground_id, scanned_at, cached_only=cached_only)
    ends = (
        lookups.gate_ends(fixture_id, place.gate_id, cached_only=cached_only)
        if fixture_id is not None
        else None
    )
    ground = lookups.ground_info(place.ground_id, cached_only=cached_only)
    context = decision.ScanContext(
        device_id=device.id,
        turnstile_id=place.id,
        gate_id=place.gate_id,
        fixture_id=fixture_id,
        day=ends.day if ends else None,
        home_ok=bool(ends and ends.home),
        away_ok=bool(ends and ends.away),
        reentry=bool(ends and ends.reentry),
        direction=direction,
        barcode=barcode,
        nonce=nonce,
        scanned_at=scanned_at,
        stored_at=now,
        fits_format=ground.ticket_format.fits(barcode),
    )
    return CheckedScan(context=context, place=place, ends=ends, ground=ground)


def scan_decide(
    *,
    device: lookups.DeviceInfo,
    turnstile: str,
    barcode: str,
    scanned_at: datetime,
    nonce: UUID,
    direction: str = Scan.Direction.IN,
    now: datetime | None = None,
) -> ScanResult:
    """Admit or deny one scan at a turnstile, store it, and say why, in words a steward can act on.

    The match is the one at the turnstile's ground whose kick-off is nearest the time scanned
    (lookups.fixture_at). One admission per ticket is the database's: a conditional UPDATE.
    The same nonce from the same device again returns the stored decision and stores nothing."""
    scan = scan_check(
        device=device,
        turnstile=turnstile,
        barcode=barcode,
        scanned_at=scanned_at,
        nonce=nonce,
        direction=direction,
        now=now,
    )
    outcome = decision.decide(scan.context)
    result = scan_result(scan, outcome)
    scan_announce(scan, outcome, result)
    return result


def scan_result(scan: CheckedScan, outcome: decision.Outcome) -> ScanResult:
    """The answer to the turnstile."""
    direction = scan.context.direction
    return ScanResult(
        decision=outcome.decision,
        reason=outcome.reason or None,
        message=scan_message(
            outcome, direction=direction, ground=scan.ground, reentry=scan.context.reentry
        ),
        ticket=_ticket_json(outcome, scan.ground),
        replayed=outcome.replayed,
        scan_id=outcome.scan_id,
    )


def scan_announce(scan: CheckedScan, outcome: decision.Outcome, result: ScanResult) -> None:
    """After the decision has committed: the control room hears of a banned holder turned away,
    and the match's live counts are due (live_counts, at most one a second)."""
    fixture_id = scan.context.fixture_id
    if outcome.replayed or fixture_id is None:
        return
    if outcome.reason == Reason.BANNED:
        _publish_banned(outcome, fixture_id, scan.place, scan.context.scanned_at, result.ticket)
    live_counts.touch(fixture_id)
    ctx = scan.context
    gate_pressure.scan_count(
        fixture_id=fixture_id, ground_id=scan.place.ground_id, gate_id=ctx.gate_id,
        turnstile_id=ctx.turnstile_id, scanned_at=ctx.scanned_at, direction=ctx.direction,
        reason=outcome.reason,
    )  # fmt: skip


def _ticket_json(outcome: decision.Outcome, ground: lookups.GroundInfo) -> dict[str, Any] | None:
    if outcome.ticket_id is None:
        return None
    return {
        "block": ground.block_codes.get(outcome.block_id) if outcome.block_id else None,
        "row": outcome.row,
        "seat": outcome.seat,
        "area": outcome.area,
        "end": outcome.end,
    }


def _place(outcome: decision.Outcome, ground: lookups.GroundInfo) -> str:
    if outcome.block_id is None:
        return outcome.area
    block = ground.block_codes.get(outcome.block_id, "?")
    return rules.seat_place(block, outcome.row, outcome.seat)


def scan_message(
    outcome: decision.Outcome, *, direction: str, ground: lookups.GroundInfo, reentry: bool
) -> str:
    """What the steward at the turnstile reads: the decision and what to do next (entry.rules'
    words, the answer's details in their slots). `reentry`: the match's rule (an exit re-opens
    entry)."""
    reason = outcome.reason
    if not reason:
        if direction == Scan.Direction.OUT:
            return rules.exit_words(reentry)
        return rules.admit_words(_place(outcome, ground))
    if reason == Reason.ALREADY_INSIDE:
        gate = ground.gate_names.get(outcome.entered_gate_id or 0)
        when = f"{timezone.localtime(outcome.entered_at):%H:%M}" if outcome.entered_at else None
        return rules.message(reason, where=rules.where_words(gate, when))
    if reason == Reason.WRONG_END:
        gates = ground.block_gates.get(outcome.block_id or 0, ())
        return rules.message(reason, end=rules.end_words(outcome.end), go=rules.go_words(gates))
    return rules.message(reason)


def _publish_banned(
    outcome: decision.Outcome,
    fixture_id: int,
    place: lookups.TurnstileInfo,
    scanned_at: datetime,
    ticket: dict[str, Any] | None,
) -> None:
    """The control room sees a banned holder turned away. No name or photo in the frame: those
    stay behind the flag's page, which records who read them (docs/adr/0004-ban-register.md)."""
    publish(
        fixture_id=fixture_id,
        type=ENTRY_DENIED,
        data={
            "reason": outcome.reason,
            "gate": place.gate_name,
            "turnstile": place.code,
            "scanned_at": clock.iso(scanned_at),
            "ticket": ticket,
            "flag": outcome.flag_id,
        },
        audience=Audience(home_only=True),
    )


# --- offline scanners (docs/adr/0006-offline-scanners.md) ---------------------------------------

MAX_OFFLINE_SCANS = 500
# The fields of one uploaded scan (entry/api.py OfflineAdmitIn, OfflineDenyIn): no others.
OFFLINE_FIELDS = frozenset(
    {"barcode", "turnstile", "scanned_at", "nonce", "direction", "decision", "reason"}
)


def several_grounds(code: str) -> str:
    return _("'%(code)s' names turnstiles at several grounds") % {"code": code}


def no_turnstile(code: str) -> str:
    return _("no turnstile '%(code)s' at your organisation's grounds") % {"code": code}


def turnstile_place(device: lookups.DeviceInfo, code: str) -> lookups.TurnstileInfo:
    """The turnstile with this code at the device's organisation's grounds, or ScanError."""
    try:
        place = lookups.turnstile_for(device.organisation_id, code)
    except lookups.AmbiguousTurnstile:
        raise SeveralTurnstiles("turnstile", several_grounds(code)) from None
    if place is None:
        raise NoSuchTurnstile("turnstile", no_turnstile(code))
    return place


@dataclass(frozen=True)
class OfflineScan:
    """One scan a scanner decided from its bundle: what happened at the turnstile."""

    barcode: str
    place: lookups.TurnstileInfo
    scanned_at: datetime
    nonce: UUID
    direction: str
    decision: str
    reason: str  # "" when admitted


@dataclass(frozen=True)
class OfflineResult:
    nonce: UUID
    decision: str
    reason: str
    conflict: bool  # this scan and another both admitted the ticket (EntryConflict)
    replayed: bool  # this nonce was uploaded before; nothing stored

    def to_json(self) -> dict[str, Any]:
        return {
            "nonce": str(self.nonce),
            "decision": self.decision,
            "reason": self.reason or None,
            "conflict": self.conflict,
            "replayed": self.replayed,
        }


def _offline_scan_read(
    device: lookups.DeviceInfo, item: Any, now: datetime, prefix: str
) -> OfflineScan:
    """One uploaded scan, checked as an online scan is (scan_decide), plus the device's decision;
    ScanError names the field within the upload (`scans[3].barcode`)."""

    def field(name: str) -> str:
        return f"{prefix}.{name}" if name else prefix

    if not isinstance(item, dict):
        raise ScanError(field(""), _("must be a JSON object"))
    undeclared = item.keys() - OFFLINE_FIELDS
    if undeclared:  # as the schema says (`additionalProperties: false`)
        raise ScanError(field(min(undeclared)), _("is not a field of this request"))

    def text(name: str, default: str | None = None) -> str:
        value = item.get(name, default)
        if not isinstance(value, str):
            raise ScanError(
                field(name), _("is required (a string)") if value is None else _("must be a string")
            )
        return value

    barcode = text("barcode")
    if not BARCODE.fullmatch(barcode):
        raise ScanError(field("barcode"), _("must be 1 to 64 printable characters, without spaces"))
    try:
        place = turnstile_place(device, text("turnstile"))
    except ScanError as error:  # the same refusal (and status), named within the upload
        raise type(error)(field(error.field), error.message) from None
    try:
        scanned_at = datetime.fromisoformat(text("scanned_at").replace("Z", "+00:00"))
    except ValueError:
        raise ScanError(field("scanned_at"), _("must be an ISO 8601 time")) from None
    if scanned_at.tzinfo is None:
        raise ScanError(
            field("scanned_at"), _("must carry a time zone (e.g. 2016-10-26T19:05+01:00)")
        )
    if scanned_at > now + timedelta(seconds=settings.SAFEGROUND_CLOCK_SKEW_SECONDS):
        raise ScannedLater(field("scanned_at"), _("is in the future: check the scanner's clock"))
    try:
        nonce = UUID(text("nonce"))
    except ValueError:
        raise ScanError(field("nonce"), _("must be a UUID")) from None
    direction = text("direction", Scan.Direction.IN)
    if direction not in Scan.Direction.values:
        raise ScanError(field("direction"), _("must be 'in' or 'out'"))
    decision = text("decision")
    if decision not in Scan.Decision.values:
        raise ScanError(field("decision"), _("must be 'admit' or 'deny'"))
    reason = item.get("reason") or ""
    if decision == Scan.Decision.ADMIT and reason:
        raise ScanError(field("reason"), _("must be null when the scan was admitted"))
    if decision == Scan.Decision.DENY and reason not in Reason.values:
        raise ScanError(
            field("reason"), _("must be one of %(values)s") % {"values": ", ".join(Reason.values)}
        )
    return OfflineScan(barcode, place, scanned_at, nonce, direction, decision, reason)


def _offline_scans_read(device: lookups.DeviceInfo, data: Any, now: datetime) -> list[OfflineScan]:
    """A scanner's upload, `{"scans": [...]}`, checked whole before anything is stored."""
    undeclared = data.keys() - {"scans"} if isinstance(data, dict) else set()
    if undeclared:
        raise ScanError(min(undeclared), _("is not a field of this request"))
    items = data.get("scans") if isinstance(data, dict) else None
    if not isinstance(items, list):
        raise ScanError("scans", _("is required (a list of scans)"))
    if not 1 <= len(items) <= MAX_OFFLINE_SCANS:
        raise ScanError("scans", _("must hold 1 to %(most)s scans") % {"most": MAX_OFFLINE_SCANS})
    return [_offline_scan_read(device, item, now, f"scans[{i}]") for i, item in enumerate(items)]


def offline_scans_upload(
    *, device: lookups.DeviceInfo, data: Any, now: datetime | None = None
) -> list[OfflineResult]:
    """Check a scanner's upload whole (ScanError naming `scans[i].field`, nothing stored), then
    store its scans in one transaction and reconcile them, first scan wins by time scanned: an
    offline admission of a ticket not inside admits it; of a ticket inside by another admission,
    it raises an EntryConflict between the two, and the earlier one stands."""
    now = now or timezone.now()
    scans = _offline_scans_read(device, data, now)
    for attempt in (1, 2):
        try:
            with transaction.atomic():
                results, fixture_ids = _offline_scans_store(device, scans, now)
            break
        except IntegrityError:
            # The same nonces stored meanwhile by a retry of this upload: the second attempt
            # answers them as replayed. (Nothing of the first attempt was kept.)
            if attempt == 2:
                raise
    for fixture_id in fixture_ids:
        live_counts.touch(fixture_id)
    # Counted when they arrive, in their own times (after the commit: a retried upload's
    # replayed scans are not counted twice).
    for scan, result in zip(scans, results, strict=True):
        match = lookups.fixture_at(scan.place.ground_id, scan.scanned_at)
        if match is not None and not result.replayed:
            gate_pressure.scan_count(
                fixture_id=match, ground_id=scan.place.ground_id,
                gate_id=scan.place.gate_id, turnstile_id=scan.place.id,
                scanned_at=scan.scanned_at, direction=scan.direction, reason=result.reason,
            )  # fmt: skip
    return results


def _offline_scans_store(
    device: lookups.DeviceInfo, scans: Sequence[OfflineScan], now: datetime
) -> tuple[list[OfflineResult], set[int]]:
    fixtures = {
        scan.nonce: lookups.fixture_at(scan.place.ground_id, scan.scanned_at) for scan in scans
    }
    tickets: dict[tuple[int, str], int] = {}
    wanted: dict[int, set[str]] = {}
    for scan in scans:
        if (fixture_id := fixtures[scan.nonce]) is not None:
            wanted.setdefault(fixture_id, set()).add(scan.barcode)
    for fixture_id, barcodes in wanted.items():
        for pk, barcode in Ticket.objects.filter(
            fixture_id=fixture_id, barcode__in=barcodes
        ).values_list("pk", "barcode"):
            tickets[fixture_id, barcode] = pk
    # Lock every ticket of the upload at once, in id order: two uploads naming the same tickets
    # in another order wait for each other instead of deadlocking. Online scans wait too.
    list(
        Ticket.objects.select_for_update()
        .filter(pk__in=sorted(set(tickets.values())))
        .order_by("pk")
        .values_list("pk")
    )
    # Read after the locks: a retry of this upload that was waiting on them is answered replayed.
    stored = {
        nonce: (pk, decision, reason)
        for nonce, pk, decision, reason in Scan.objects.filter(
            device_id=device.id, nonce__in=[scan.nonce for scan in scans]
        ).values_list("nonce", "pk", "decision", "reason")
    }
    banned = _banned_admissions(scans, fixtures, tickets, stored)
    results: list[OfflineResult] = []
    touched: set[int] = set()
    for scan in scans:
        prior = stored.get(scan.nonce)
        if prior is not None:
            pk, decision, reason = prior
            conflict = EntryConflict.objects.filter(Q(first_scan=pk) | Q(second_scan=pk)).exists()
            results.append(OfflineResult(scan.nonce, decision, reason, conflict, replayed=True))
            continue
        fixture_id = fixtures[scan.nonce]
        ticket_id = tickets.get((fixture_id, scan.barcode)) if fixture_id is not None else None
        scan = _forged_offline(scan)
        row = Scan.objects.create(
            device_id=device.id,
            nonce=scan.nonce,
            ticket_id=ticket_id,
            barcode=scan.barcode,
            fixture_id=fixture_id,
            turnstile_id=scan.place.id,
            gate_id=scan.place.gate_id,
            direction=scan.direction,
            decision=scan.decision,
            reason=scan.reason,
            scanned_at=scan.scanned_at,
            stored_at=now,
            offline=True,
        )
        stored[scan.nonce] = (row.pk, scan.decision, scan.reason)
        conflict = False
        if fixture_id is not None:
            touched.add(fixture_id)
            if ticket_id is not None:
                conflict = _offline_reconcile(scan, row, fixture_id, ticket_id, now)
                if (flag_id := banned.get(ticket_id)) and _is_admission(scan):
                    _publish_banned_admitted(scan, fixture_id, ticket_id, flag_id)
        results.append(OfflineResult(scan.nonce, scan.decision, scan.reason, conflict, False))
    return results, touched


def _forged_offline(scan: OfflineScan) -> OfflineScan:
    """A scanner offline cannot tell a forged ticket from an unknown one (the ground's ticket
    format is the server's): an unknown barcode that fits the format is stored as forged, so the
    gate's forged tickets are counted whether its scanners were online or not."""
    if scan.reason != Reason.UNKNOWN_TICKET:
        return scan
    if not lookups.ground_info(scan.place.ground_id).ticket_format.fits(scan.barcode):
        return scan
    return replace(scan, reason=Reason.FORGED)


def _is_admission(scan: OfflineScan) -> bool:
    return scan.direction == Scan.Direction.IN and scan.decision == Scan.Decision.ADMIT


def _banned_admissions(
    scans: Sequence[OfflineScan],
    fixtures: dict[UUID, int | None],
    tickets: dict[tuple[int, str], int],
    stored: dict[UUID, Any],
) -> dict[int, int]:
    """The tickets this upload newly admits that are banned now (a flag confirmed after the
    scanner's bundle was made), with the flag: one query per match, none without admissions."""
    admitted: dict[int, set[int]] = {}
    days: dict[int, date] = {}
    for scan in scans:
        fixture_id = fixtures[scan.nonce]
        if fixture_id is None or scan.nonce in stored or not _is_admission(scan):
            continue
        if (ticket_id := tickets.get((fixture_id, scan.barcode))) is not None:
            admitted.setdefault(fixture_id, set()).add(ticket_id)
            if fixture_id not in days:
                days[fixture_id] = lookups.gate_ends(fixture_id, scan.place.gate_id).day
    banned: dict[int, int] = {}
    for fixture_id, ticket_ids in admitted.items():
        banned |= banned_tickets(ticket_ids, days[fixture_id])
    return banned


def _offline_reconcile(
    scan: OfflineScan, row: Scan, fixture_id: int, ticket_id: int, now: datetime
) -> bool:
    """What an offline scan changes about its (locked) ticket; True if it raised a conflict."""
    tickets = Ticket.objects.filter(pk=ticket_id)
    if scan.decision == Scan.Decision.DENY:
        if scan.reason == Reason.BANNED:
            _publish_banned_offline(scan, fixture_id, ticket_id)
        return False
    if scan.direction == Scan.Direction.OUT:
        if lookups.gate_ends(fixture_id, scan.place.gate_id).reentry:  # the match's rule
            tickets.filter(inside=True).update(inside=False)
        return False
    admitted = tickets.filter(inside=False).update(
        inside=True, entered_at=scan.scanned_at, entered_gate_id=scan.place.gate_id
    )
    if admitted:
        return False
    standing = (
        Scan.objects.filter(
            ticket_id=ticket_id, direction=Scan.Direction.IN, decision=Scan.Decision.ADMIT
        )
        .exclude(pk=row.pk)
        .exclude(pk__in=EntryConflict.objects.filter(ticket_id=ticket_id).values("second_scan_id"))
        .order_by("-scanned_at", "-pk")
        .first()
    )
    if standing is None:  # inside with no admission on record (set by hand): nothing to compare
        return False
    first, second = (row, standing) if scan.scanned_at < standing.scanned_at else (standing, row)
    if first is row:  # the earlier admission stands: the ticket came in when and where it did
        tickets.update(entered_at=row.scanned_at, entered_gate_id=row.gate_id)
    conflict = EntryConflict.objects.create(
        fixture_id=fixture_id,
        ticket_id=ticket_id,
        first_scan=first,
        second_scan=second,
        raised_at=now,
    )
    publish(
        fixture_id=fixture_id,
        type=ENTRY_CONFLICT,
        data=entry_conflicts(fixture_id, ids=[conflict.pk])[0],
        audience=Audience(home_only=True),
    )
    return True


def _publish_banned_offline(scan: OfflineScan, fixture_id: int, ticket_id: int) -> None:
    """A banned holder turned away by a scanner offline: the control room hears it when the scan
    arrives, with the time it happened (the same frame as an online one, marked offline)."""
    day = lookups.gate_ends(fixture_id, scan.place.gate_id).day
    flag_id = decision.confirmed_flag(ticket_id, day)
    data = {"reason": scan.reason, **_offline_frame(scan, ticket_id, flag_id)}
    publish(fixture_id=fixture_id, type=ENTRY_DENIED, data=data, audience=Audience(home_only=True))


def _publish_banned_admitted(
    scan: OfflineScan, fixture_id: int, ticket_id: int, flag_id: int
) -> None:
    """A scanner offline admitted a holder banned since its bundle was made: the control room
    hears it when the scan arrives, to find them inside (entry.denied's offline frame without a
    reason; no name, as there)."""
    publish(
        fixture_id=fixture_id,
        type=ENTRY_BANNED_ADMITTED,
        data=_offline_frame(scan, ticket_id, flag_id),
        audience=Audience(home_only=True),
    )


def _offline_frame(scan: OfflineScan, ticket_id: int, flag_id: int | None) -> dict[str, Any]:
    return {
        "gate": scan.place.gate_name,
        "turnstile": scan.place.code,
        "scanned_at": clock.iso(scan.scanned_at),
        "ticket": ticket_seat(ticket_id),
        "flag": flag_id,
        "offline": True,
    }
