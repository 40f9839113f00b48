"""The match plan's figures, worked out from the policy and shown with their working: stewards
per zone from the zone's capacity and the category's ratio, first-aid cover from the crowd."""

import math
from typing import Any

from .models import Fixture
from .policy import FirstAidPolicy, PlanPolicy
from .selectors import fixture_safe_capacities


def stewards_computed(fixture: Fixture, plan: PlanPolicy) -> list[dict[str, Any]]:
    """One row per zone of the fixture: safe capacity / spectators per steward, rounded up."""
    rows = []
    safe = fixture_safe_capacities(fixture)  # the Green Guide's, not the seats
    for fixture_zone in fixture.zones.select_related("zone").order_by("use", "zone__code"):
        capacity = safe[fixture_zone.zone_id].safe
        per = plan.spectators_per_steward[fixture_zone.use]
        computed = math.ceil(capacity / per)
        rows.append(
            {
                "zone": fixture_zone.zone.code,
                # Kept in the plan's versions: English, with its other languages beside it.
                "name": fixture_zone.zone.name,
                "names": fixture_zone.zone.names,
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
