"""Offline bundles: what a scanner needs to decide at its turnstile with no network, signed.

A bundle is one match's tickets as seen from one turnstile: each barcode as a keyed hash (a
fresh HMAC key per bundle, so a lost phone gives no barcode away and hashes from two bundles
cannot be matched), its end, its state and its seat; which ends the gate lets in; the gates
serving each block (for the "wrong end" message). No names, dates of birth or raw barcodes.
The payload's canonical JSON bytes are signed with Ed25519; the scanner verifies them before it
trusts them (docs/adr/0006-offline-scanners.md).
"""

import hashlib
import hmac
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from operator import itemgetter
from typing import Any

from django.conf import settings
from django.db.models import Case, CharField, Value, When
from django.utils import timezone
from django.utils.translation import gettext as _

from safeground import clock
from safeground.errors import NotFound
from safeground.matches.models import Fixture
from safeground.signing import (  # noqa: F401 (the scanner's key, as entry has always offered it)
    b64url,
    canonical_json,
    key_id,
    public_key_json,
    public_key_raw,
    sign,
    signing_key,
)

from . import decision, rules
from .models import Ticket, TicketFlag
from .runtime import lookups
from .scans import ScanError, turnstile_place

VERSION = 1
HASH_BYTES = 12  # 96 bits: no collision among a ground's tickets, short on the wire
HASH_CHARS = HASH_BYTES * 4 // 3  # a multiple of 3 bytes: base64 without padding, 16 characters
ENDS: dict[str, str] = {Ticket.End.HOME: "h", Ticket.End.AWAY: "a"}


class NoMatch(NotFound):
    """No match at the turnstile's ground now or soon: nothing to bundle."""

    code = "no_match"


# --- the bundle (signed with the server's one key: safeground/signing.py) ------------------------


def bundle_fixture(ground_id: int, now: datetime) -> int | None:
    """The match a scanner at this ground works now: the one scans are for now (lookups.fixture_at),
    or else the next one whose entry window opens within SAFEGROUND_ENTRY_OPENS_HOURS."""
    current = lookups.fixture_at(ground_id, now)
    if current is not None:
        return current
    opens = timedelta(hours=settings.SAFEGROUND_ENTRY_OPENS_HOURS)
    soon = sorted(
        (kickoff, fixture_id)
        for fixture_id, kickoff in lookups.ground_info(ground_id).fixtures
        if now < kickoff - opens <= now + opens
    )
    return soon[0][1] if soon else None


def ticket_hashes(key: bytes, barcodes: Iterable[str]) -> list[str]:
    """base64url(HMAC-SHA256(key, barcode)[:12]) of each barcode, in order. The keyed state is
    copied rather than made again for each barcode, and all are encoded in one go: 55,000 in
    about half the time of one `hmac.digest` and one encoding each."""
    keyed = hmac.new(key, digestmod=hashlib.sha256)
    digests = []
    for barcode in barcodes:
        one = keyed.copy()
        one.update(barcode.encode())
        digests.append(one.digest()[:HASH_BYTES])
    encoded = b64url(b"".join(digests))
    return [encoded[i : i + HASH_CHARS] for i in range(0, len(encoded), HASH_CHARS)]


def _flag_states(fixture_id: int, day: Any) -> dict[int, str]:
    """Ticket id -> "banned" (a confirmed flag on a ban in force that day: the deny list) or
    "flagged" (an open one), as the online decision reads them."""
    states: dict[int, str] = {}
    for ticket_id, status in TicketFlag.objects.filter(
        decision.in_force_on(day),
        ticket__fixture_id=fixture_id,
        status__in=[TicketFlag.Status.CONFIRMED, TicketFlag.Status.OPEN],
    ).values_list("ticket_id", "status"):
        if status == TicketFlag.Status.CONFIRMED or ticket_id not in states:
            states[ticket_id] = "banned" if status == TicketFlag.Status.CONFIRMED else "flagged"
    return states


def state_table(states: tuple[str, ...]) -> dict[tuple[str, str | None], str]:
    """A ticket's one state from its own (valid, inside or cancelled) and its flag's (none,
    banned or flagged): the first of `states` (entry.rules' order) that holds, else its own."""
    table = {}
    for own in ("valid", "inside", "cancelled"):
        for flag in (None, "banned", "flagged"):
            holds = {own, flag}
            table[own, flag] = next((state for state in states if state in holds), own)
    return table


# Looked up once per ticket (55,000 of them in a bundle): built from the table once.
STATES = state_table(rules.bundle_states())


@dataclass(frozen=True)
class SignedBundle:
    payload: bytes  # canonical JSON
    signature: bytes
    key_id: str

    def to_json(self) -> dict[str, str]:
        return {
            "payload": b64url(self.payload),
            "signature": b64url(self.signature),
            "key_id": self.key_id,
        }


def bundle_payload(
    *, turnstile: lookups.TurnstileInfo, fixture_id: int, now: datetime
) -> dict[str, Any]:
    """The bundle's content, built from plain rows in three queries (bench/bench_bundle.py)."""
    fixture = Fixture.objects.select_related("home_club", "away_club").get(pk=fixture_id)
    ends = lookups.gate_ends(fixture_id, turnstile.gate_id)
    ground = lookups.ground_info(turnstile.ground_id)
    closes = fixture.kickoff + timedelta(hours=settings.SAFEGROUND_ENTRY_CLOSES_HOURS)
    expires = min(closes, now + timedelta(hours=settings.SAFEGROUND_BUNDLE_HOURS))
    key = secrets.token_bytes(32)
    flags = _flag_states(fixture_id, ends.day)
    blocks = ground.block_codes
    # The ticket's own state in SQL: plain strings need no conversion per row (a boolean
    # column does, on SQLite), which is a fifth of the time for 55,000 rows.
    own_state = Case(
        When(status=Ticket.Status.CANCELLED, then=Value("cancelled")),
        When(inside=True, then=Value("inside")),
        default=Value("valid"),
        output_field=CharField(),
    )
    rows = list(
        Ticket.objects.filter(fixture_id=fixture_id)
        .order_by("pk")  # SQLite then reads the table in order: half the time of the index
        .annotate(own_state=own_state)
        .values_list("barcode", "pk", "end", "block_id", "area", "row", "seat", "own_state")
    )
    hashes = ticket_hashes(key, (row[0] for row in rows))
    tickets = [
        [hashed, ENDS[end], STATES[own, flags.get(pk)], blocks.get(block_id, "") or area, row, seat]
        for hashed, (_, pk, end, block_id, area, row, seat, own) in zip(hashes, rows, strict=True)
    ]
    # In hash order: in import (often barcode) order, the list would say which seat holds the
    # n-th barcode.
    tickets.sort(key=itemgetter(0))
    return {
        "version": VERSION,
        "fixture": {
            "id": fixture.pk,
            "title": f"{fixture.home_club.name} v {fixture.away_club.name}",
            "kickoff": clock.utc_iso(fixture.kickoff),
        },
        "turnstile": {
            "code": turnstile.code,
            "gate": turnstile.gate_name,
            "gate_id": turnstile.gate_id,
        },
        "ends": {"home": ends.home, "away": ends.away},
        "reentry": ends.reentry,
        "issued_at": clock.utc_iso(now),
        "expires_at": clock.utc_iso(expires),
        "hash": {"alg": "HMAC-SHA256", "key": b64url(key), "bytes": HASH_BYTES},
        "tickets": tickets,
        "gates_for_block": {
            blocks[block_id]: list(gates)
            for block_id, gates in sorted(ground.block_gates.items())
            if block_id in blocks
        },
    }


def bundle_sign(payload: dict[str, Any]) -> SignedBundle:
    data = canonical_json(payload)
    signature, signer = sign(data)
    return SignedBundle(payload=data, signature=signature, key_id=signer)


def bundle_for(
    *, device: lookups.DeviceInfo, turnstile: str, now: datetime | None = None
) -> SignedBundle:
    """The signed bundle for a device's turnstile. ScanError for a turnstile it may not use,
    NoMatch when its ground has no match now or soon."""
    now = now or timezone.now()
    if not turnstile:
        raise ScanError("turnstile", _("is required (the turnstile's code, e.g. F03)"))
    place = turnstile_place(device, turnstile)
    fixture_id = bundle_fixture(place.ground_id, now)
    if fixture_id is None:
        raise NoMatch(
            "turnstile",
            f"no match at this ground now or with entry opening in the next"
            f" {settings.SAFEGROUND_ENTRY_OPENS_HOURS:g} hours: ask again nearer the match",
        )
    return bundle_sign(bundle_payload(turnstile=place, fixture_id=fixture_id, now=now))
