"""Reads for closing a stand and evacuating it (issue 41): the exits that serve it, its
evacuation time and figure from the Green Guide capacity (venues/capacity.py, the capacity
page's own), the stewards posted at its blocks, the acknowledgements of the broadcast that told
them, and how many people are still inside by the turnstiles' record.

Still inside: the gates that serve the stand are those serving any of its blocks (the venue
file's `serves`, Gate.blocks); the count is their admissions in minus their exits, read from the
counts the database keeps per gate as scans are stored (entry/counts.py): no work per scan. A
gate that also serves another stand counts whole for each, so where gates are shared the figure
is an upper bound (never "empty" while someone may be inside); the page names those gates.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from django.contrib.auth import get_user_model
from django.shortcuts import get_object_or_404

from safeground.accounts.permissions import can_close_stand, can_open_control_room, require
from safeground.entry.counts import inside_through_gates
from safeground.incidents.selectors import current_posts, post_label
from safeground.matches.models import Fixture
from safeground.matches.selectors import fixture_for
from safeground.venues.capacity import Capacity, stand_capacities
from safeground.venues.models import Block, Exit, Gate, Stand, ZoneBlock, natural_key

from .models import StandClosure


def stand_for_evacuation(user: Any, fixture_id: int, stand_id: int) -> tuple[Fixture, Stand]:
    """The match and one stand of its ground, for someone in its control room (404: no such
    stand at this ground)."""
    fixture = fixture_for(user, fixture_id)
    require(can_open_control_room(user, fixture))
    stand = get_object_or_404(Stand, pk=stand_id, ground_id=fixture.ground_id)
    return fixture, stand


def closure_current(fixture: Fixture, stand: Stand) -> StandClosure | None:
    """The stand's latest closure or reopening at this match (None: never closed)."""
    return (
        StandClosure.objects.filter(fixture=fixture, stand=stand)
        .select_related("broadcast", "decision__entry")
        .order_by("-at", "-pk")
        .first()
    )


def stands_closed(fixture: Fixture) -> dict[int, StandClosure]:
    """stand id -> its closure, for each stand closed now."""
    latest: dict[int, StandClosure] = {}
    for closure in StandClosure.objects.filter(fixture=fixture).order_by("at", "pk"):
        latest[closure.stand_id] = closure
    return {pk: closure for pk, closure in latest.items() if closure.closed}


def stand_blocks(stand: Stand) -> list[Block]:
    return sorted(Block.objects.filter(tier__stand=stand), key=lambda b: natural_key(b.code))


def stand_exits(stand: Stand) -> list[Exit]:
    return sorted(
        Exit.objects.filter(blocks__tier__stand=stand).distinct(),
        key=lambda e: natural_key(e.code),
    )


@dataclass(frozen=True)
class StandGate:
    gate: Gate
    shared: bool  # it serves blocks of another stand too (counted whole: an upper bound)


def stand_gates(stand: Stand) -> list[StandGate]:
    found = []
    for gate in (
        Gate.objects.filter(blocks__tier__stand=stand).distinct().prefetch_related("blocks__tier")
    ):
        shared = any(block.tier.stand_id != stand.pk for block in gate.blocks.all())
        found.append(StandGate(gate, shared))
    return sorted(found, key=lambda g: natural_key(g.gate.code))


def stand_steward_posts(fixture: Fixture, stand: Stand) -> dict[int, Any]:
    """steward id -> their current post, for those posted at the stand's blocks: a zone with one
    of them, or a gate or concourse that serves one."""
    block_ids = set(Block.objects.filter(tier__stand=stand).values_list("pk", flat=True))
    zone_ids = set(
        ZoneBlock.objects.filter(block_id__in=block_ids).values_list("zone_id", flat=True)
    )
    gate_ids = set(
        Gate.blocks.through.objects.filter(block_id__in=block_ids).values_list("gate_id", flat=True)
    )
    concourse_ids = set(
        Block.concourses.through.objects.filter(block_id__in=block_ids).values_list(
            "concourse_id", flat=True
        )
    )
    return {
        steward_id: post
        for steward_id, post in current_posts(fixture).items()
        if post.zone_id in zone_ids
        or post.gate_id in gate_ids
        or post.concourse_id in concourse_ids
    }


def stand_capacity(stand: Stand) -> Capacity | None:
    """The stand's Green Guide figures as the capacity page works them out."""
    return next(
        (capacity for found, capacity in stand_capacities(stand.ground) if found.pk == stand.pk),
        None,
    )


def still_inside(fixture: Fixture, stand: Stand) -> int:
    gate_ids = list(
        Gate.objects.filter(blocks__tier__stand=stand).distinct().values_list("pk", flat=True)
    )
    return inside_through_gates(fixture.pk, gate_ids)


def minutes_to_clear(people: int, capacity: Capacity | None, minutes: float) -> float | None:
    """At the exits' evacuation rate (the capacity's evacuation figure over its time), how long
    these people take to leave (None: no exit is assessed)."""
    passes = capacity.evacuation.value if capacity else None
    if not passes:
        return None
    return math.ceil(10 * people * minutes / passes) / 10


@dataclass(frozen=True)
class Acknowledgements:
    acknowledged: int
    addressed: int
    waiting: list[str]  # the names of those who have not acknowledged yet


def acknowledgements(closure: StandClosure | None) -> Acknowledgements | None:
    if closure is None or closure.broadcast is None:
        return None
    broadcast = closure.broadcast
    acked = set(broadcast.acks.values_list("user_id", flat=True))
    people = {
        user.pk: user for user in get_user_model().objects.filter(pk__in=broadcast.recipient_ids)
    }
    waiting = [
        str(people[pk]) for pk in broadcast.recipient_ids if pk in people and pk not in acked
    ]
    return Acknowledgements(
        acknowledged=len(acked & set(broadcast.recipient_ids)),
        addressed=len(broadcast.recipient_ids),
        waiting=sorted(waiting),
    )


@dataclass(frozen=True)
class EvacuationPicture:
    """What the evacuation page shows of one stand at one match."""

    fixture: Fixture
    stand: Stand
    blocks: list[Block]
    exits: list[Exit]
    gates: list[StandGate]
    capacity: Capacity | None
    minutes: float  # the ground's evacuation time (the fire risk assessment's)
    stewards: list[tuple[Any, str]]  # (steward, where posted), by name
    closure: StandClosure | None
    may_close: bool

    @property
    def shared_gates(self) -> list[str]:
        return [g.gate.local_name for g in self.gates if g.shared]

    @property
    def closed(self) -> bool:
        return bool(self.closure and self.closure.closed)


def evacuation_picture(user: Any, fixture: Fixture, stand: Stand) -> EvacuationPicture:
    posts = stand_steward_posts(fixture, stand)
    return EvacuationPicture(
        fixture=fixture,
        stand=stand,
        blocks=stand_blocks(stand),
        exits=stand_exits(stand),
        gates=stand_gates(stand),
        capacity=stand_capacity(stand),
        minutes=fixture.ground.evacuation_minutes,
        stewards=sorted(
            ((post.steward, post_label(post)) for post in posts.values()), key=lambda p: str(p[0])
        ),
        closure=closure_current(fixture, stand),
        may_close=can_close_stand(user, fixture),
    )


@dataclass(frozen=True)
class EvacuationLive:
    """The part of the page that moves: the acknowledgements and who is still inside."""

    inside: int
    clear_minutes: float | None
    acks: Acknowledgements | None


def evacuation_live(fixture: Fixture, stand: Stand) -> EvacuationLive:
    inside = still_inside(fixture, stand)
    return EvacuationLive(
        inside=inside,
        clear_minutes=minutes_to_clear(
            inside, stand_capacity(stand), fixture.ground.evacuation_minutes
        ),
        acks=acknowledgements(closure_current(fixture, stand)),
    )
