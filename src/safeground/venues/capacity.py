"""The Green Guide's safe capacity of a stand or a zone, with its working.

For a set of seats (whole blocks, or rows of a block by their share of its rows):

- holding capacity: the seats x the stand's (P) factor (physical condition) x its (S) factor
  (safety management);
- entry capacity: one hour through the turnstiles: each gate's turnstiles x the rate per hour
  (SAFEGROUND_TURNSTILE_RATE, 660), shared between the blocks the gate serves by their seats;
- exit capacity: normal egress within the ground's egress time (8 minutes): each exit's width x
  its rate of passage (level or stairs, people per metre per minute) x the minutes, shared between
  the blocks it serves by their seats (exits used only in an emergency are left out);
- emergency evacuation capacity: the same over every exit, emergency ones too, within the
  evacuation time (2.5 to 8 minutes, set by the fire risk assessment: the ground's value unless a
  caller gives one);
- safe capacity: the lowest of them. A figure the venue file gives nothing for (no gates, no
  exits) is shown as not assessed and left out of the lowest.

Each line of the working is rounded down and its figure is the sum of its lines, so the working
adds up to the figure shown.
"""

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from django.conf import settings
from django.utils.translation import gettext as _

from .models import Block, Exit, Gate, Ground, Stand, Turnstile, ZoneBlock, natural_key


@dataclass(frozen=True)
class Figure:
    name: str
    value: int | None  # None: the venue file gives nothing to assess it from
    working: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Capacity:
    seats: int
    holding: Figure
    entry: Figure
    exit: Figure
    evacuation: Figure

    @property
    def figures(self) -> list[Figure]:
        return [self.holding, self.entry, self.exit, self.evacuation]

    @property
    def safe(self) -> int:
        return min(figure.value for figure in self.figures if figure.value is not None)

    @property
    def limited_by(self) -> str:
        return next(figure.name for figure in self.figures if figure.value == self.safe)


@dataclass(frozen=True)
class _Block:
    code: str
    seats: int
    rows: list[str]
    p_factor: float
    s_factor: float


@dataclass(frozen=True)
class _Route:
    name: str
    per_hour_or_minute: float  # a gate's people per hour; an exit's people per minute
    detail: str  # "11 turnstiles x 660/h", "2.0 m stairs x 66/m/min"
    blocks: tuple[int, ...]
    emergency_only: bool = False


@dataclass(frozen=True)
class GroundData:
    """What the capacity of any part of one ground is computed from (read once)."""

    blocks: dict[int, _Block]
    gates: list[_Route]
    exits: list[_Route]
    egress_minutes: float
    evacuation_minutes: float
    rate_per_hour: int


def ground_data(ground: Ground, *, rate_per_hour: int | None = None) -> GroundData:
    stands = {
        stand.pk: stand
        for stand in Stand.objects.filter(ground=ground).only("p_factor", "s_factor")
    }
    blocks = {
        block.pk: _Block(
            block.code,
            block.capacity,
            list(block.rows or ()),
            stands[block.tier.stand_id].p_factor,
            stands[block.tier.stand_id].s_factor,
        )
        for block in Block.objects.filter(ground=ground).select_related("tier")
    }
    rate = int(rate_per_hour or settings.SAFEGROUND_TURNSTILE_RATE)
    gates = [
        _Route(
            gate.local_name,
            len(gate.turnstiles.all()) * rate,
            _("%(turnstiles)s turnstiles × %(rate)s/h")
            % {"turnstiles": len(gate.turnstiles.all()), "rate": f"{rate:,}"},
            tuple(block.pk for block in gate.blocks.all()),
        )
        for gate in sorted(
            Gate.objects.filter(ground=ground).prefetch_related("turnstiles", "blocks"),
            key=lambda gate: natural_key(gate.code),
        )
    ]
    exits = []
    for exit_ in sorted(
        Exit.objects.filter(ground=ground).prefetch_related("blocks"),
        key=lambda exit_: natural_key(exit_.code),
    ):
        flow = ground.stair_rate if exit_.kind == Exit.Kind.STAIRS else ground.level_rate
        exits.append(
            _Route(
                exit_.name,
                exit_.width * flow,
                _("%(width)s m %(kind)s × %(flow)s/m/min")
                % {
                    "width": f"{exit_.width:g}",
                    "kind": exit_.get_kind_display().lower(),
                    "flow": flow,
                },
                tuple(block.pk for block in exit_.blocks.all()),
                exit_.emergency_only,
            )
        )
    return GroundData(blocks, gates, exits, ground.egress_minutes, ground.evacuation_minutes, rate)


def capacity_of(
    data: GroundData, parts: Mapping[int, float], *, evacuation_minutes: float | None = None
) -> Capacity:
    """The capacity of these seats: block id -> the share of the block (1 for all of it)."""
    minutes = evacuation_minutes if evacuation_minutes is not None else data.evacuation_minutes
    seats = {pk: data.blocks[pk].seats * share for pk, share in parts.items() if pk in data.blocks}
    total = sum(seats.values())
    return Capacity(
        seats=math.floor(total),
        holding=_holding(data, seats),
        entry=_through(
            _("Entry capacity"),
            data.gates,
            data,
            seats,
            1.0,
            _("× 1 h"),
            _("no gate serves these blocks"),
            _("the venue file has no gates"),
        ),
        exit=_through(
            _("Exit capacity"),
            [route for route in data.exits if not route.emergency_only],
            data,
            seats,
            data.egress_minutes,
            _("× %(minutes)s min egress") % {"minutes": f"{data.egress_minutes:g}"},
            _("no exit serves these blocks"),
            _("the venue file has no exits"),
        ),
        evacuation=_through(
            _("Emergency evacuation capacity"),
            data.exits,
            data,
            seats,
            minutes,
            _("× %(minutes)s min evacuation") % {"minutes": f"{minutes:g}"},
            _("no exit serves these blocks"),
            _("the venue file has no exits"),
        ),
    )


def _down(people: float) -> int:
    """Rounded down, after the float error of a product (1.2 x 82 x 2.5 is 245.99999...)."""
    return math.floor(round(people, 6))


def _holding(data: GroundData, seats: Mapping[int, float]) -> Figure:
    by_factors: dict[tuple[float, float], float] = defaultdict(float)
    for pk, n in seats.items():
        block = data.blocks[pk]
        by_factors[block.p_factor, block.s_factor] += n
    lines = [(p, s, n, _down(n * p * s)) for (p, s), n in sorted(by_factors.items())]
    said = _("%(seats)s seats × (P) %(p)s × (S) %(s)s = %(held)s")
    working = [
        said
        % {"seats": f"{math.floor(n):,}", "p": f"{p:.2f}", "s": f"{s:.2f}", "held": f"{held:,}"}
        for p, s, n, held in lines
    ]
    return Figure(_("Holding capacity"), sum(held for *_factors, held in lines), working)


def _through(
    name: str,
    routes: Iterable[_Route],
    data: GroundData,
    seats: Mapping[int, float],
    minutes: float,
    unit: str,
    none_serve: str,
    none_at_all: str,
) -> Figure:
    routes = list(routes)
    if not routes:
        return Figure(name, None, [_("Not assessed: %(why)s.") % {"why": none_at_all}])
    value = 0
    working = []
    for route in routes:
        mine = sum(seats.get(pk, 0.0) for pk in route.blocks)
        if not mine:
            continue
        served = sum(data.blocks[pk].seats for pk in route.blocks if pk in data.blocks)
        # Each route's people rounded down, and the figure their sum: the working adds up to
        # the figure shown, and no route is counted above what it passes.
        part = _down(route.per_hour_or_minute * minutes * mine / served)
        value += part
        share = (
            ""
            if mine == served
            else " "
            + _("× %(mine)s of its %(served)s seats")
            % {"mine": f"{mine:,.0f}", "served": f"{served:,}"}
        )
        working.append(f"{route.name}: {route.detail} {unit}{share} = {part:,}")
    if not working:
        working = [f"0: {none_serve}."]
    return Figure(name, value, working)


def zone_parts(zone_ids: Iterable[int], data: GroundData) -> dict[int, dict[int, float]]:
    """zone id -> block id -> the share of the block in the zone (its rows' share)."""
    parts: dict[int, dict[int, float]] = defaultdict(dict)
    for zone_id, block_id, first, last in ZoneBlock.objects.filter(
        zone_id__in=list(zone_ids)
    ).values_list("zone_id", "block_id", "first_row", "last_row"):
        rows = data.blocks[block_id].rows
        share = 1.0
        if first and rows and first in rows and (last or first) in rows:
            start, stop = rows.index(first), rows.index(last or first)
            share = (abs(stop - start) + 1) / len(rows)
        parts[zone_id][block_id] = parts[zone_id].get(block_id, 0.0) + share
    return parts


def zone_capacities(
    ground: Ground, zone_ids: Iterable[int], *, evacuation_minutes: float | None = None
) -> dict[int, Capacity]:
    data = ground_data(ground)
    return {
        zone_id: capacity_of(data, parts, evacuation_minutes=evacuation_minutes)
        for zone_id, parts in zone_parts(zone_ids, data).items()
    }


def stand_capacities(
    ground: Ground, *, evacuation_minutes: float | None = None
) -> list[tuple[Stand, Capacity]]:
    data = ground_data(ground)
    by_stand: dict[int, dict[int, float]] = defaultdict(dict)
    for pk, stand_id in Block.objects.filter(ground=ground).values_list("pk", "tier__stand_id"):
        by_stand[stand_id][pk] = 1.0
    return [
        (stand, capacity_of(data, by_stand[stand.pk], evacuation_minutes=evacuation_minutes))
        for stand in Stand.objects.filter(ground=ground)
        if stand.pk in by_stand
    ]


@dataclass(frozen=True)
class GateEntry:
    """A gate's Green Guide entry capacity: its turnstiles x the turnstile rate, a minute."""

    gate_id: int
    name: str
    turnstiles: dict[int, str]  # id -> code
    per_minute: float


def gate_entry_capacities(ground_id: int) -> dict[int, GateEntry]:
    """Every gate of the ground with its turnstiles and entry capacity a minute (two queries)."""
    rate = settings.SAFEGROUND_TURNSTILE_RATE
    turnstiles: dict[int, dict[int, str]] = defaultdict(dict)
    for pk, gate_id, code in Turnstile.objects.filter(gate__ground_id=ground_id).values_list(
        "pk", "gate_id", "code"
    ):
        turnstiles[gate_id][pk] = code
    return {
        pk: GateEntry(pk, name, turnstiles[pk], len(turnstiles[pk]) * rate / 60)
        for pk, name in Gate.objects.filter(ground_id=ground_id).values_list("pk", "name")
    }
