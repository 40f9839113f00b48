"""Reads about grounds; a read of one ground checks the reader may see it."""

from typing import Any

from django.db.models import Count, Sum
from django.shortcuts import get_object_or_404

from safeground.accounts.permissions import can_plan_fixtures, can_view_ground, require

from .models import Block, Gate, Ground, Turnstile, natural_key
from .plan import Plan, plan_for_ground


def grounds_visible_to(user: Any) -> list[Ground]:
    return [g for g in Ground.objects.select_related("organisation") if can_view_ground(user, g)]


def ground_for(user: Any, code: str) -> Ground:
    ground = get_object_or_404(Ground, code=code)
    require(can_view_ground(user, ground))
    return ground


def ground_for_planning(user: Any, code: str) -> Ground:
    """A ground whose fixtures the user may add and edit."""
    ground = ground_for(user, code)
    require(can_plan_fixtures(user, ground))
    return ground


def ground_plan(ground: Ground, zone_uses: dict[int, str] | None = None) -> Plan:
    return plan_for_ground(ground, zone_uses=zone_uses)


def blocks_with_seats(ground: Ground) -> list[Block]:
    """The blocks whose seats are numbered: those a sheet of seat labels can be printed for."""
    return list(ground.blocks.filter(seats_per_row__gt=0).order_by("code"))


def ground_totals(ground: Ground) -> dict[str, int]:
    return {
        "stands": ground.stands.count(),
        "blocks": ground.blocks.count(),
        "seats": ground.blocks.aggregate(seats=Sum("capacity"))["seats"] or 0,
        "gates": ground.gates.count(),
        "turnstiles": Turnstile.objects.filter(gate__ground=ground).count(),
    }


def gates_with_blocks(ground: Ground) -> list[Gate]:
    gates: list[Gate] = list(
        ground.gates.annotate(turnstile_count=Count("turnstiles")).prefetch_related("blocks")
    )
    for gate in gates:
        gate.block_codes = sorted((b.code for b in gate.blocks.all()), key=natural_key)  # type: ignore[attr-defined]
    return gates
