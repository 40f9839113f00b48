"""The seating plan as data for the SVG template: every block with its shape, zone and label."""

from dataclasses import dataclass
from functools import cached_property

from .models import Block, Gate, Ground, ZoneBlock, natural_key

# When zones overlap, the plan shows the one that matters most for safety.
ZONE_PRIORITY = {"buffer": 0, "away": 1, "home": 2, "other": 3}


@dataclass(frozen=True)
class PlanBlock:
    id: int
    code: str
    name: str
    stand: str
    tier: str
    capacity: int
    zone_kind: str
    zone_name: str
    zone_id: int | None
    points: str
    label_x: float
    label_y: float


@dataclass(frozen=True)
class PlanGate:
    """A gate with a position on the plan: the control room marks a gate under pressure there."""

    code: str
    name: str
    x: float
    y: float


@dataclass(frozen=True)
class Plan:
    ground: Ground
    width: int
    height: int
    pitch: str
    note: str
    blocks: list[PlanBlock]

    @cached_property
    def gates(self) -> list[PlanGate]:
        """The gates with a position on the plan; read only by a page that draws them (the
        control room's map), not by every plan."""
        gates = []
        for code, name, position in Gate.objects.filter(ground=self.ground).values_list(
            "code", "name", "position"
        ):
            try:
                x, y = (float(part) for part in position.split(","))
            except ValueError:  # no position given (or not "x,y"): not on the plan
                continue
            gates.append(PlanGate(code=code, name=name, x=x, y=y))
        return sorted(gates, key=lambda gate: natural_key(gate.code))


def _centroid(points: str) -> tuple[float, float]:
    pairs = [tuple(float(v) for v in p.split(",")) for p in points.split()]
    return (
        round(sum(x for x, _ in pairs) / len(pairs), 1),
        round(sum(y for _, y in pairs) / len(pairs), 1),
    )


def plan_for_ground(ground: Ground, zone_uses: dict[int, str] | None = None) -> Plan:
    """zone_uses (zone id -> home/away/buffer) is a fixture's layout; None means the default one."""
    members = ZoneBlock.objects.filter(zone__ground=ground).select_related("zone")
    if zone_uses is None:
        members = members.filter(zone__is_default=True)
    else:
        members = members.filter(zone_id__in=zone_uses)
    zone_of: dict[int, tuple[str, str, int | None]] = {}
    for member in members:
        kind = zone_uses[member.zone_id] if zone_uses is not None else member.zone.kind
        current = zone_of.get(member.block_id)
        if current is None or ZONE_PRIORITY[kind] < ZONE_PRIORITY[current[0]]:
            zone_of[member.block_id] = (kind, member.zone.local_name, member.zone_id)
    blocks = []
    for block in sorted(
        Block.objects.filter(ground=ground).select_related("tier__stand"),
        key=lambda block: natural_key(block.code),
    ):
        kind, zone_name, zone_id = zone_of.get(block.id, ("", "", None))
        x, y = _centroid(block.shape)
        blocks.append(
            PlanBlock(
                id=block.id,
                code=block.code,
                name=block.local_name,
                stand=block.tier.stand.local_name,
                tier=block.tier.local_name,
                capacity=block.capacity,
                zone_kind=kind,
                zone_name=zone_name,
                zone_id=zone_id,
                points=block.shape,
                label_x=x,
                label_y=y,
            )
        )
    return Plan(
        ground=ground,
        width=ground.plan_width,
        height=ground.plan_height,
        pitch=ground.pitch_shape,
        note=ground.layout_note,
        blocks=blocks,
    )
