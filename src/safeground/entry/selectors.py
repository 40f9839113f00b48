"""Reads about entry: who is in, where, against capacity, and who was turned away and why.

`entry_counts(fixture)` is the one shape the counts API, the `entry.counts` live event and the
arrival replay all use (documented in docs/adr/0005-turnstile-decisions.md).
"""

from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Count, Q, QuerySet, Sum
from django.http import Http404
from django.utils import timezone
from django.utils.translation import gettext as _

from safeground import clock
from safeground.accounts.permissions import (
    can_open_control_room,
    can_review_flags,
    flag_organisation_ids,
    require,
)
from safeground.bans.matching import BanIndex, Banned, Holder, swapped
from safeground.bans.models import AccessRecord
from safeground.bans.selectors import reason_check
from safeground.bans.services import access_record_write
from safeground.matches.models import Fixture, FixtureZone
from safeground.matches.selectors import fixture_for
from safeground.venues.models import Block, Gate, ZoneBlock, natural_key

from . import counts, decision
from .models import EntryConflict, GateWarned, Scan, ScanCount, Ticket, TicketFlag
from .zone_limits import ZoneLimit, zone_limits

Reason = Scan.Reason
PREVENTING = counts.PREVENTING
CONFLICTS_LISTED = 50  # the newest conflicts in the counts; the total counts them all


def prevented_from_attending(fixture_ids: Collection[int]) -> dict[int, int]:
    """fixture id -> the tickets "prevented from attending": denied as banned, flagged or
    cancelled and never admitted (no `entered_at`), each ticket once, every match given.

    The one definition (docs/adr/0009-reports.md): the control room's live counts, the
    post-match report, the season dashboard and the exports all read it. "Never admitted", not
    "not inside now": a holder turned away, admitted later and gone out again was not prevented.
    Read from the count the database keeps as scans are stored (entry/counts.py, ADR 0022)."""
    return counts.prevented_by_match(fixture_ids)


def entry_counts_for(user: Any, fixture_id: int) -> dict[str, Any]:
    """The counts of a match, for someone who may open its control room."""
    fixture = fixture_for(user, fixture_id)
    require(can_open_control_room(user, fixture))
    return entry_counts(fixture)


def _share(admitted: int, capacity: int) -> float:
    return round(admitted / capacity, 3) if capacity else 0.0


@dataclass(frozen=True)
class _Block:
    code: str
    capacity: int
    rows: list[str]
    stand_code: str
    stand_name: str


def _rows_between(rows: list[str], first: str, last: str) -> set[str]:
    if not first:
        return set(rows)
    if first in rows and (last or first) in rows:
        start, stop = rows.index(first), rows.index(last or first)
        return set(rows[min(start, stop) : max(start, stop) + 1])
    return {first, last} - {""}


def _blocks_of_ground(ground_id: int) -> dict[int, _Block]:
    """The ground's blocks with their seats, rows and stand, read once for the whole count."""
    return {
        pk: _Block(code, capacity, list(rows or ()), stand_code, stand_name)
        for pk, code, capacity, rows, stand_code, stand_name in Block.objects.filter(
            ground_id=ground_id
        ).values_list("pk", "code", "capacity", "rows", "tier__stand__code", "tier__stand__name")
    }


def _inside_by_row_and_gate(
    fixture: Fixture,
) -> tuple[Counter[tuple[int | None, str]], Counter[int | None]]:
    """Who is in, by (block, row) and by the gate they came through, in one pass (one query)
    over the match's tickets: the zones that take part of a block need the rows."""
    by_row: Counter[tuple[int | None, str]] = Counter()
    admitted_at: Counter[int | None] = Counter()
    for block_id, row, gate_id, n in (
        Ticket.objects.filter(fixture=fixture, inside=True)
        .values_list("block_id", "row", "entered_gate_id")
        .annotate(n=Count("pk"))
        .values_list("block_id", "row", "entered_gate_id", "n")
        .order_by()
    ):
        by_row[block_id, row] += n
        admitted_at[gate_id] += n
    return by_row, admitted_at


def _stand_counts(
    blocks: dict[int, _Block], by_block: Counter[int | None]
) -> dict[str, dict[str, Any]]:
    """Admitted against seats per stand, the blocks summed in the order of their codes."""
    stands: dict[str, dict[str, Any]] = {}
    for pk, block in sorted(blocks.items(), key=lambda item: natural_key(item[1].code)):
        stand = stands.setdefault(
            block.stand_code,
            {"code": block.stand_code, "name": block.stand_name, "admitted": 0, "capacity": 0},
        )
        stand["admitted"] += by_block.get(pk, 0)
        stand["capacity"] += block.capacity
    for stand in stands.values():
        stand["share"] = _share(stand["admitted"], stand["capacity"])
    return stands


def _zone_admitted_and_seats(
    parts: list[tuple[int, str, str]],
    blocks: dict[int, _Block],
    by_row: Counter[tuple[int | None, str]],
    by_block: Counter[int | None],
) -> tuple[int, int]:
    """Admitted and seats of a zone made of whole blocks or of rows of blocks: a part of a block
    has its share of the block's seats, pro rata to its rows."""
    zone_admitted = zone_capacity = 0
    for block_id, first, last in parts:
        member = blocks.get(block_id)
        if member is None:
            continue
        rows = _rows_between(member.rows, first, last)
        if first and member.rows:
            zone_capacity += round(member.capacity * len(rows) / len(member.rows))
            zone_admitted += sum(by_row.get((block_id, row), 0) for row in rows)
        else:
            zone_capacity += member.capacity
            zone_admitted += by_block.get(block_id, 0)
    return zone_admitted, zone_capacity


def _zone_counts(
    fixture: Fixture,
    blocks: dict[int, _Block],
    by_row: Counter[tuple[int | None, str]],
    by_block: Counter[int | None],
    warn_at: float,
) -> list[dict[str, Any]]:
    """Admitted per zone of the match (home, away, buffer), against its safe capacity."""
    zones = []
    members: dict[int, list[tuple[int, str, str]]] = {}
    fixture_zones = list(
        FixtureZone.objects.filter(fixture=fixture)
        .select_related("zone")
        .order_by("use", "zone__code")
    )
    for zone_id, block_id, first, last in ZoneBlock.objects.filter(
        zone_id__in=[fz.zone_id for fz in fixture_zones]
    ).values_list("zone_id", "block_id", "first_row", "last_row"):
        members.setdefault(zone_id, []).append((block_id, first, last))
    limits = zone_limits(fixture)
    for fz in fixture_zones:
        zone_admitted, zone_capacity = _zone_admitted_and_seats(
            members.get(fz.zone_id, []), blocks, by_row, by_block
        )
        # Against the safe capacity and the tickets sold, not the seats (entry/zone_limits.py).
        limit = limits.get(fz.zone_id, ZoneLimit(zone_capacity, 0))
        zones.append(
            {
                "code": fz.zone.code,
                "name": fz.zone.name,
                "names": fz.zone.names,  # the screen picks its language (safeground/languages.py)
                "use": fz.use,
                "admitted": zone_admitted,
                "seats": zone_capacity,
                "capacity": limit.safe_capacity,
                "sold": limit.sold,
                "share": _share(zone_admitted, limit.limit),
                "warning": limit.warns(zone_admitted, warn_at),
            }
        )
    return zones


def _denied_by_gate_and_reason(fixture: Fixture) -> tuple[Counter[int], Counter[str]]:
    """The match's refusals counted by gate and by reason, in one query of the counts the
    database keeps (entry/counts.py): a few rows, however many scans."""
    denied = list(
        ScanCount.objects.filter(fixture=fixture, decision=Scan.Decision.DENY)
        .values_list("gate_id", "reason")
        .annotate(n=Sum("scans"))
        .values_list("gate_id", "reason", "n")
        .order_by()
    )
    denied_at: Counter[int] = Counter()
    by_reason: Counter[str] = Counter()
    for gate_id, reason, n in denied:
        denied_at[gate_id] += n
        by_reason[reason] += n
    return denied_at, by_reason


def entry_counts(fixture: Fixture) -> dict[str, Any]:
    """Admitted per gate, stand and zone against capacity; denials by reason and by gate."""
    warn_at = float(settings.SAFEGROUND_CAPACITY_WARNING)
    blocks = _blocks_of_ground(fixture.ground_id)
    by_row, admitted_at = _inside_by_row_and_gate(fixture)
    by_block: Counter[int | None] = Counter()
    for (in_block, _row), n in by_row.items():
        by_block[in_block] += n
    admitted = sum(by_block.values())
    stands = _stand_counts(blocks, by_block)
    zones = _zone_counts(fixture, blocks, by_row, by_block, warn_at)
    gate_rows = list(
        Gate.objects.filter(ground_id=fixture.ground_id).values_list("pk", "code", "name")
    )
    denied_at, by_reason = _denied_by_gate_and_reason(fixture)
    prevented = prevented_from_attending([fixture.pk])[fixture.pk]
    return {
        "fixture": fixture.pk,
        "at": clock.iso(timezone.now()),
        "admitted": admitted,
        "capacity": sum(zone["capacity"] for zone in zones if zone["use"] != "buffer"),
        "warning_share": warn_at,
        "gates": [
            {
                "code": code,
                "name": name,
                "admitted": admitted_at.get(pk, 0),
                "denied": denied_at.get(pk, 0),
            }
            for pk, code, name in gate_rows
        ],
        "stands": list(stands.values()),
        "zones": zones,
        "denied": {
            "total": sum(by_reason.values()),
            "by_reason": {reason: by_reason.get(reason, 0) for reason in Reason.values},
            # Each reason's name in the asker's language (the reason table's), for the page.
            "labels": {reason.value: _(reason.label) for reason in Reason},
        },
        "prevented": prevented,
        # Tickets admitted twice (offline scanners): admitted above counts each ticket once.
        "conflicts": {
            "total": EntryConflict.objects.filter(fixture=fixture).count(),
            "list": entry_conflicts(fixture.pk, limit=CONFLICTS_LISTED),
        },
        "warnings": [
            f"{zone['name']}: {zone['admitted']} in of a safe capacity of {zone['capacity']}"
            f" with {zone['sold']} tickets sold, warning at {warn_at:.0%}"
            for zone in zones
            if zone["warning"]
        ],
    }


def ticket_seat(ticket_id: int) -> dict[str, Any] | None:
    """A ticket's place as the gates' events and answers give it: no name, no barcode."""
    row = (
        Ticket.objects.filter(pk=ticket_id)
        .values_list("block__code", "row", "seat", "area", "end")
        .first()
    )
    if row is None:
        return None
    block, seat_row, seat, area, end = row
    return {"block": block, "row": seat_row, "seat": seat, "area": area, "end": end}


def banned_tickets(ticket_ids: Collection[int], day: date) -> dict[int, int]:
    """Of these tickets, those under a confirmed flag of a ban in force on the match day, with
    the first such flag: the tickets the online decision would refuse as `banned`."""
    if not ticket_ids:
        return {}
    flags = (
        decision.flags_in_force(ticket_ids, day)
        .filter(status=TicketFlag.Status.CONFIRMED)
        .order_by("-pk")
        .values_list("ticket_id", "pk")
    )
    return dict(flags)  # in descending order: the first flag of each ticket is the one kept


SCAN_FIELDS = ("gate__name", "turnstile__code", "scanned_at", "offline")


def entry_conflicts(
    fixture_id: int, *, ids: list[int] | None = None, limit: int | None = None
) -> list[dict[str, Any]]:
    """A match's tickets admitted twice, newest first: the seat, and both scans (where, when,
    online or offline). The admission scanned first stands. The `entry.conflict` event's shape."""
    conflicts = EntryConflict.objects.filter(fixture_id=fixture_id).order_by("-raised_at", "-pk")
    if ids is not None:
        conflicts = conflicts.filter(pk__in=ids)
    rows = conflicts.values_list(
        "pk",
        "raised_at",
        "ticket__block__code",
        "ticket__row",
        "ticket__seat",
        "ticket__area",
        "ticket__end",
        *(f"first_scan__{name}" for name in SCAN_FIELDS),
        *(f"second_scan__{name}" for name in SCAN_FIELDS),
    )
    return [
        {
            "id": pk,
            "raised_at": clock.iso(raised_at),
            "ticket": {"block": block, "row": row, "seat": seat, "area": area, "end": end},
            "first": _scan_json(*scans[:4]),
            "second": _scan_json(*scans[4:]),
        }
        for pk, raised_at, block, row, seat, area, end, *scans in (rows[:limit] if limit else rows)
    ]


def _scan_json(gate: str, turnstile: str, scanned_at: datetime, offline: bool) -> dict[str, Any]:
    return {
        "gate": gate,
        "turnstile": turnstile,
        "scanned_at": clock.iso(scanned_at),
        "offline": offline,
    }


# --- ban flags on tickets, for the ban officer's review ------------------------------------------


def flags_open(user: Any) -> QuerySet[TicketFlag]:
    """Open flags on tickets for the matches of the grounds the user reviews flags for."""
    return TicketFlag.objects.filter(
        status=TicketFlag.Status.OPEN,
        ticket__fixture__ground__organisation__in=flag_organisation_ids(user),
    ).select_related(
        "ticket__fixture__home_club", "ticket__fixture__away_club", "ticket__block", "league_ban"
    )


FLAGS_LISTED = 500


@transaction.atomic
def flags_list(*, user: Any, reason: str) -> list[TicketFlag]:
    """The open flags with their holders' names, after a stated reason; the showing is recorded
    once per organisation whose flags are listed (which flags, why)."""
    require(bool(flag_organisation_ids(user)))
    reason = reason_check(reason)
    flags = list(
        flags_open(user)
        .select_related("ticket__fixture__ground")
        .order_by("-score", "pk")[:FLAGS_LISTED]
    )
    by_org: dict[int, list[int]] = {}
    for flag in flags:
        by_org.setdefault(flag.ticket.fixture.ground.organisation_id, []).append(flag.pk)
    for org in sorted(flag_organisation_ids(user)):
        shown = by_org.get(org, [])
        access_record_write(
            user=user,
            action=AccessRecord.Action.LIST_FLAGS,
            organisation=org,
            reason=reason,
            detail=f"{len(shown)} open flags with holders' names and seats: "
            + (", ".join(f"#{pk}" for pk in shown) or "none"),
        )
    return flags


def flag_summary(user: Any, flag_id: int) -> TicketFlag:
    flag = (
        TicketFlag.objects.select_related(
            "ticket__fixture__ground",
            "ticket__fixture__home_club",
            "ticket__fixture__away_club",
            "ticket__block",
            "ban__person",
            "league_ban",
        )
        .filter(pk=flag_id)
        .first()
    )
    if flag is None:
        raise Http404(_("no such flag"))
    require(can_review_flags(user, flag.ticket.fixture.ground.organisation_id))
    return flag


@transaction.atomic
def flag_review(*, user: Any, flag_id: int, reason: str) -> TicketFlag:
    """A flagged ticket with the banned person's record beside it; the read is recorded."""
    flag = flag_summary(user, flag_id)
    access_record_write(
        user=user,
        action=AccessRecord.Action.REVIEW_FLAG,
        organisation=flag.ticket.fixture.ground.organisation_id,
        person=flag.ban.person if flag.ban else None,
        ban=flag.ban,
        reason=reason_check(reason),
        detail=f"flag {flag.pk}, ticket {flag.ticket.barcode}"
        + (f", league ban of {flag.league_ban.issuing_club}" if flag.league_ban else ""),
    )
    return flag


def flags_awaiting(user: Any) -> int:
    """The count the register's queue shows (bans.hooks)."""
    return flags_open(user).count()


# --- subject access: what entry holds about one person on the register ------------------------


def _iso(value: Any) -> str | None:
    return clock.iso_or_none(value)


def subject_ticket_ids(person: Any) -> set[int]:
    """The tickets of the person's club's matches whose holder matches them (name and date of
    birth, as flagging matches them), and the tickets flagged against their bans."""
    ids: set[int] = set(
        TicketFlag.objects.filter(ban__person=person).values_list("ticket_id", flat=True)
    )
    if person.date_of_birth is None:  # erased from the register
        return ids
    dobs = [d for d in (person.date_of_birth, swapped(person.date_of_birth)) if d]
    index = BanIndex([Banned(0, person.full_name, person.date_of_birth)])
    threshold = float(settings.SAFEGROUND_MATCH_THRESHOLD)
    for pk, name, dob in Ticket.objects.filter(
        fixture__ground__organisation_id=person.organisation_id, holder_dob__in=dobs
    ).values_list("pk", "holder_name", "holder_dob"):
        if dob is not None and index.candidates(Holder(pk, name, dob), threshold=threshold):
            ids.add(pk)
    return ids


def subject_access_tickets(person: Any) -> dict[str, Any]:
    """Entry's part of a subject-access export (safeground.privacy): the person's tickets
    (subject_ticket_ids), each with its scans, and the flags on them or against the person's
    bans. The caller checks and records the access."""
    ids = subject_ticket_ids(person)
    found = (
        Ticket.objects.filter(pk__in=ids)
        .select_related("fixture__home_club", "fixture__away_club", "block")
        .prefetch_related("scans__gate", "scans__turnstile")
        .order_by("fixture__kickoff", "barcode")
    )
    flags = TicketFlag.objects.filter(Q(ban__person=person) | Q(ticket_id__in=ids)).order_by("pk")
    return {
        "tickets": [
            {
                "id": t.pk,
                "match": str(t.fixture),
                "kickoff": _iso(t.fixture.kickoff),
                "barcode": t.barcode,
                "holder_name": t.holder_name,
                "holder_date_of_birth": _iso(t.holder_dob),
                "holder_erased_at": _iso(t.holder_erased_at),
                "place": t.place,
                "end": t.end,
                "status": t.status,
                "cancelled_reason": t.cancelled_reason,
                "entered_at": _iso(t.entered_at),
                "scans": [
                    {
                        "id": scan.pk,
                        "scanned_at": _iso(scan.scanned_at),
                        "gate": scan.gate.name,
                        "turnstile": scan.turnstile.code,
                        "direction": scan.direction,
                        "decision": scan.decision,
                        "reason": scan.reason,
                        "offline": scan.offline,
                    }
                    for scan in t.scans.all()
                ],
            }
            for t in found
        ],
        "ticket_flags": [
            {
                "id": f.pk,
                "ticket": f.ticket_id,
                "ban": f.ban_id,
                "score": f.score,
                "reasons": f.reasons,
                "status": f.status,
                "flagged_at": _iso(f.flagged_at),
                "decided_at": _iso(f.decided_at),
                "decision_note": f.decision_note,
            }
            for f in flags
        ],
    }


def gate_warnings_started(
    *, fixture_id: int, gate_id: int, since: datetime
) -> list[dict[str, Any]]:
    """The gate warnings that started at a gate at that moment, as assessed then: what a warning
    entry of the log written at their onset (its gate, its observed_at) tells."""
    return list(
        GateWarned.objects.filter(fixture_id=fixture_id, gate_id=gate_id, since=since)
        .order_by("cause")
        .values_list("warning", flat=True)
    )
