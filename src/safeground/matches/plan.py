"""The match plan's figures, worked out from the policy and shown with their working: stewards
per zone from the zone's capacity and the category's ratio, first-aid cover from the crowd."""

import math
from typing import Any

from .models import Fixture, FixtureZone
from .policy import FirstAidPolicy, PlanPolicy


def plan_zone_capacity(fixture_zone: FixtureZone) -> int:
    """The zone's seats (a block's capacity, or its rows' seats when the zone takes some rows).

    The Green Guide's safe capacity replaces this at merge
    (matches.selectors.fixture_safe_capacities)."""
    seats = 0
    for member in fixture_zone.zone.members.select_related("block"):
        block = member.block
        if member.first_row and block.rows and block.seats_per_row:
            rows = list(block.rows)
            first = rows.index(member.first_row) if member.first_row in rows else 0
            last = rows.index(member.last_row) if member.last_row in rows else len(rows) - 1
            seats += min(block.capacity, (last - first + 1) * block.seats_per_row)
        else:
            seats += block.capacity
    return seats


def stewards_computed(fixture: Fixture, plan: PlanPolicy) -> list[dict[str, Any]]:
    """One row per zone of the fixture: capacity / spectators per steward, rounded up."""
    rows = []
    for fixture_zone in fixture.zones.select_related("zone").order_by("use", "zone__code"):
        capacity = plan_zone_capacity(fixture_zone)
        per = plan.spectators_per_steward[fixture_zone.use]
        computed = math.ceil(capacity / per)
        rows.append(
            {
                "zone": fixture_zone.zone.code,
                "name": fixture_zone.zone.name,
                "use": fixture_zone.use,
                "capacity": capacity,
                "per": per,
                "computed": computed,
                "stewards": computed,
            }
        )
    return rows


def first_aid_computed(spectators: int, policy: FirstAidPolicy) -> dict[str, Any]:
    first = min(spectators, policy.up_to)
    rest = max(0, spectators - policy.up_to)
    computed = math.ceil(first / policy.per) + math.ceil(rest / policy.then_per)
    working = f"{first:,} / {policy.per:,}"
    if rest:
        working += f" + {rest:,} / {policy.then_per:,}"
    return {
        "spectators": spectators,
        "computed": computed,
        "first_aiders": computed,
        "crowd_doctor": spectators > policy.doctor_over,
        "working": f"{working}, each rounded up = {computed}",
    }
