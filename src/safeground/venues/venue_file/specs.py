"""What a venue file describes, once checked: the specs the import writes (venues/services.py),
the limits a venue file is held to beside the YAML reader's own, and the venue file's check."""

from dataclasses import dataclass, field
from typing import Any

from safeground.yaml_file import Check

from ..models import LayoutZone, Zone

ZONE_KINDS = tuple(Zone.Kind.values)
LAYOUT_USES = tuple(LayoutZone.Use.values)

# Beside the limits of every YAML file (safeground/yaml_file.py), a venue file's own, so that a
# wrong or hostile file is refused within seconds. Each is named in the error it gives.
MAX_ROWS = 200  # rows in a block
MAX_SEATS_PER_ROW = 500
MAX_SEATS = 250_000  # the ground's capacity, all blocks together


class VenueCheck(Check):
    noun = "field"


def max_length(model: Any, field: str) -> int:
    return int(model._meta.get_field(field).max_length)


@dataclass(frozen=True)
class FlowSpec:
    level_rate: int = 82
    stair_rate: int = 66
    egress_minutes: float = 8.0
    evacuation_minutes: float = 8.0


@dataclass(frozen=True)
class TicketsSpec:
    prefix: str = ""
    length: int = 0
    check: str = "none"


@dataclass(frozen=True)
class GroundSpec:
    code: str
    name: str
    layout_note: str
    plan_width: int
    plan_height: int
    pitch: str
    flow: FlowSpec
    tickets: TicketsSpec
    line: int  # of ground.code, for errors found later (a ground with this code already exists)


@dataclass(frozen=True)
class TierSpec:
    code: str
    name: str
    names: dict[str, str] = field(default_factory=dict)  # other languages: {cy: "..."}


@dataclass(frozen=True)
class StandSpec:
    code: str
    name: str
    tiers: list[TierSpec]
    p_factor: float
    s_factor: float
    names: dict[str, str] = field(default_factory=dict)  # other languages: {cy: "..."}


@dataclass(frozen=True)
class ExitSpec:
    code: str
    name: str
    width: float
    kind: str
    emergency_only: bool
    serves: list[str]


@dataclass(frozen=True)
class BlockSpec:
    code: str
    name: str
    stand: str
    tier: str
    capacity: int
    rows: list[str]
    seats_per_row: int
    first_seat: int
    shape: str
    names: dict[str, str] = field(default_factory=dict)  # other languages: {cy: "..."}


@dataclass(frozen=True)
class GateSpec:
    code: str
    name: str
    position: str
    turnstiles: list[str]
    serves: list[str]
    names: dict[str, str] = field(default_factory=dict)  # other languages: {cy: "..."}


@dataclass(frozen=True)
class ConcourseSpec:
    code: str
    name: str
    serves: list[str]
    names: dict[str, str] = field(default_factory=dict)  # other languages: {cy: "..."}


@dataclass(frozen=True)
class ZoneMemberSpec:
    block: str
    first_row: str  # both blank: the whole block
    last_row: str


@dataclass(frozen=True)
class ZoneSpec:
    code: str
    name: str
    kind: str
    is_default: bool
    members: list[ZoneMemberSpec]
    names: dict[str, str] = field(default_factory=dict)  # other languages: {cy: "..."}


@dataclass(frozen=True)
class LayoutSpec:
    code: str
    name: str
    zones: dict[str, str]  # zone code -> home / away / buffer


@dataclass(frozen=True)
class VenueSpec:
    ground: GroundSpec
    stands: list[StandSpec]
    blocks: list[BlockSpec]
    gates: list[GateSpec]
    concourses: list[ConcourseSpec]
    zones: list[ZoneSpec]
    adjacency: list[tuple[str, str]]  # each touching pair once, in file order
    layouts: list[LayoutSpec]
    exits: list[ExitSpec]
