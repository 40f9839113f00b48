"""Read a venue file (YAML) and check all of it before anything is written.

A venue file describes one ground: its stands and tiers, blocks with capacity and seats, gates with
turnstiles, concourses, zones (home, away, buffer) and which blocks touch. The full reference is
`docs/venue-file.md`; in short:

    ground: {code: london-stadium, name: London Stadium, layout_note: "...",
             plan: {width: 800, height: 1000}, pitch: "x,y x,y x,y x,y"}
    stands:
      - {code: N, name: North Stand, tiers: [{code: L, name: Lower tier}, {code: U, name: Upper}]}
    blocks:
      - {code: N-L1, name: North Lower 1, stand: N, tier: L, capacity: 850,
         rows: A-Y, seats_per_row: 34, first_seat: 1, shape: "x,y x,y x,y x,y"}
    gates:
      - {code: A, name: Gate A, position: "x,y", turnstiles: 9, serves: [N-L1, N-U1]}
    concourses:
      - {code: N-L, name: North lower concourse, serves: [N-L1]}
    zones:
      - {code: away-se, name: Away section, kind: away, default: true,
         blocks: [S-L1, {block: S-L2, rows: A-F}]}
    adjacency:
      - [N-L1, N-L2]
    layouts:
      - {code: league, name: League, zones: {home-north: home, away-se: away, buffer-se: buffer}}
    exits:
      - {code: N-L1-V, name: N-L1 vomitory, width: 2.0, kind: stairs, serves: [N-L1]}

For the Green Guide capacity (venues/capacity.py): `ground.capacity` may give the rates of passage
(`level_rate`, `stair_rate`: people per metre of exit width per minute, default 82 and 66), the
normal `egress_minutes` (default 8) and the `evacuation_minutes` the fire risk assessment sets
(2.5 to 8, default 8); each stand may give its `p_factor` and `s_factor` (0 to 1, default 1); each
exit its clear `width` in metres, `kind` (level or stairs) and `emergency: true` when it is used
only in an emergency (onto the pitch).

`ground`, `stands` and `blocks` are required; the other sections may be left out. A block's name
defaults to its code. `rows` is a range ("A-Y" for letters, "1-30" for numbers) or a list of labels.
`turnstiles` is a count (9 gives A01..A09 for gate A) or a list of codes. A layout names the zones
a fixture uses and how (home, away, buffer); a block may be in only one zone of a layout.

Every problem is collected, not just the first, as `FILE:LINE: FIELD: message` (for example
`venue.yaml:14: blocks[3].capacity: must be a whole number, got 'abc'`), so whoever keeps the file
can fix it in one pass. A wrong venue file means wrong capacities and segregation on match day.
"""

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from safeground.errors import FileRefused

from .models import (
    Block,
    Concourse,
    Exit,
    Gate,
    Ground,
    Layout,
    LayoutZone,
    Stand,
    Tier,
    Turnstile,
    Zone,
    ZoneBlock,
)

ZONE_KINDS = tuple(Zone.Kind.values)
LAYOUT_USES = tuple(LayoutZone.Use.values)


class VenueFileError(FileRefused):
    """The venue file is refused; `errors` lists every problem as `file:line: field: message`."""

    code = "venue_file_refused"


@dataclass(frozen=True)
class FlowSpec:
    level_rate: int = 82
    stair_rate: int = 66
    egress_minutes: float = 8.0
    evacuation_minutes: float = 8.0


@dataclass(frozen=True)
class GroundSpec:
    code: str
    name: str
    layout_note: str
    plan_width: int
    plan_height: int
    pitch: str
    flow: FlowSpec
    line: int  # of ground.code, for errors found later (a ground with this code already exists)


@dataclass(frozen=True)
class TierSpec:
    code: str
    name: str


@dataclass(frozen=True)
class StandSpec:
    code: str
    name: str
    tiers: list[TierSpec]
    p_factor: float
    s_factor: float


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


@dataclass(frozen=True)
class GateSpec:
    code: str
    name: str
    position: str
    turnstiles: list[str]
    serves: list[str]


@dataclass(frozen=True)
class ConcourseSpec:
    code: str
    name: str
    serves: list[str]


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


# Limits, so that a wrong or hostile file is refused within seconds, in bounded memory (the demo's
# London Stadium, about 57,000 seats, is a 30 kB file). Each is named in the error it gives.
MAX_FILE_BYTES = 500_000
MAX_ALIASES = 100  # YAML aliases (*name)
MAX_NODES = 200_000  # YAML values, each alias counted as every value it repeats
MAX_ITEMS = 1_000  # items in any one list (blocks, gates, zones, ...)
MAX_ROWS = 200  # rows in a block
MAX_SEATS_PER_ROW = 500
MAX_SEATS = 250_000  # the ground's capacity, all blocks together


def venue_file_read(*, path: Path) -> VenueSpec:
    try:
        with path.open("rb") as file:
            data = file.read(MAX_FILE_BYTES + 1)
        if len(data) > MAX_FILE_BYTES:
            raise VenueFileError(
                [f"{path}: the file is over {MAX_FILE_BYTES:,} bytes, a venue file's limit"]
            )
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise VenueFileError([f"{path}: cannot read the file: {error}"]) from error
    return venue_file_parse(text=text, filename=str(path))


def venue_file_parse(*, text: str, filename: str) -> VenueSpec:
    if len(text) > MAX_FILE_BYTES:
        raise VenueFileError(
            [f"{filename}: the file is over {MAX_FILE_BYTES:,} bytes, a venue file's limit"]
        )
    try:
        # _LineLoader is a SafeLoader: a venue file can never build Python objects.
        document = yaml.load(text, Loader=_LineLoader)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line = mark.line + 1 if mark else 1
        raise VenueFileError([f"{filename}:{line}: not valid YAML: {error.problem}"]) from error
    except yaml.YAMLError as error:
        raise VenueFileError([f"{filename}:1: not valid YAML: {error}"]) from error
    check = _Check(filename)
    venue = _venue(check, document)
    if check.errors or venue is None:
        raise VenueFileError(check.errors)
    return venue


# --- YAML with line numbers ---------------------------------------------------------------------


class _Mapping(dict[Any, Any]):
    """A YAML mapping that knows its own line and the line of each key (1-based)."""

    line: int
    key_lines: dict[Any, int]


class _Sequence(list[Any]):
    """A YAML sequence that knows its own line and the line of each item (1-based)."""

    line: int
    item_lines: list[int]


class _LineLoader(yaml.SafeLoader):
    """SafeLoader that keeps line numbers, so each error can point at the line to fix.

    It counts what it composes: more than MAX_ALIASES aliases, or more than MAX_NODES values
    with each alias counted as all the values it repeats, is refused as it is read. An alias
    bomb (aliases of aliases, a billion values from a few lines) never grows."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._nodes = 0
        self._aliases = 0
        self._sizes: dict[int, int] = {}  # id(node) -> the values it holds, itself included

    def compose_node(self, parent: Any, index: Any) -> Any:
        mark = self.peek_event().start_mark
        alias = self.check_event(yaml.AliasEvent)
        before = self._nodes
        node = super().compose_node(parent, index)
        if alias:
            self._aliases += 1
            if self._aliases > MAX_ALIASES:
                raise yaml.composer.ComposerError(
                    None, None, f"more than {MAX_ALIASES} aliases (*name), the limit", mark
                )
            self._nodes += self._sizes.get(id(node), 1)
        else:
            self._nodes += 1
            self._sizes[id(node)] = self._nodes - before
        if self._nodes > MAX_NODES:
            raise yaml.composer.ComposerError(
                None, None, f"more than {MAX_NODES:,} values (aliases expanded), the limit", mark
            )
        return node


def _construct_mapping(loader: _LineLoader, node: yaml.MappingNode) -> Iterator[_Mapping]:
    mapping = _Mapping()
    mapping.line = node.start_mark.line + 1
    mapping.key_lines = {}
    yield mapping
    loader.flatten_mapping(node)
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node)
        try:
            seen = key in mapping.key_lines
        except TypeError:
            raise yaml.constructor.ConstructorError(
                "while reading a mapping",
                node.start_mark,
                "a key must be text",
                key_node.start_mark,
            ) from None
        # PyYAML keeps the last of two equal keys without a word; a typo must not hide a value.
        if seen:
            raise yaml.constructor.ConstructorError(
                "while reading a mapping",
                node.start_mark,
                f"{key!r} is given twice (first on line {mapping.key_lines[key]})",
                key_node.start_mark,
            )
        mapping.key_lines[key] = key_node.start_mark.line + 1
        mapping[key] = loader.construct_object(value_node)


def _construct_sequence(loader: _LineLoader, node: yaml.SequenceNode) -> Iterator[_Sequence]:
    sequence = _Sequence()
    sequence.line = node.start_mark.line + 1
    sequence.item_lines = [child.start_mark.line + 1 for child in node.value]
    yield sequence
    sequence.extend(loader.construct_object(child) for child in node.value)


_LineLoader.add_constructor("tag:yaml.org,2002:map", _construct_mapping)
_LineLoader.add_constructor("tag:yaml.org,2002:seq", _construct_sequence)


# --- checking, field by field -------------------------------------------------------------------


def _max_length(model: Any, field: str) -> int:
    return int(model._meta.get_field(field).max_length)


class _Check:
    """Collects every error with its line and field; readers return None for a bad value."""

    def __init__(self, filename: str) -> None:
        self.filename = filename
        self.errors: list[str] = []

    def error(self, line: int, field: str, message: str) -> None:
        self.errors.append(f"{self.filename}:{line}: {field}: {message}")

    def mapping(
        self, value: Any, line: int, field: str, allowed: tuple[str, ...]
    ) -> _Mapping | None:
        if not isinstance(value, _Mapping):
            self.error(line, field, f"must be a mapping with {', '.join(allowed)}; got {value!r}")
            return None
        for key in value:
            if key not in allowed:
                self.error(
                    value.key_lines[key],
                    f"{field}.{key}",
                    f"unknown field; expected one of {', '.join(allowed)}",
                )
        return value

    def text(
        self, m: _Mapping, key: str, field: str, *, max_length: int, default: str | None = None
    ) -> str | None:
        if key not in m:
            if default is None:
                self.error(m.line, field, "missing")
            return default
        return self.label(m[key], m.key_lines[key], field, max_length=max_length)

    def label(self, value: Any, line: int, field: str, *, max_length: int) -> str | None:
        # Numbers are fine as labels (row 12, turnstile 7); true/false almost always mean the
        # value needs quotes (YAML reads a bare `no` or `on` as a boolean).
        if isinstance(value, bool) or not isinstance(value, str | int):
            self.error(line, field, f"must be text, got {value!r} (put it in quotes)")
            return None
        label = str(value).strip()
        if not label:
            self.error(line, field, "must not be empty")
            return None
        if len(label) > max_length:
            self.error(line, field, f"must be at most {max_length} characters, got {label!r}")
            return None
        return label

    def whole_number(
        self, m: _Mapping, key: str, field: str, *, minimum: int, default: int | None = None
    ) -> int | None:
        if key not in m:
            if default is None:
                self.error(m.line, field, "missing")
            return default
        value, line = m[key], m.key_lines[key]
        if isinstance(value, bool) or not isinstance(value, int):
            self.error(line, field, f"must be a whole number, got {value!r}")
            return None
        if value < minimum:
            self.error(line, field, f"must be at least {minimum}, got {value}")
            return None
        return value

    def number(
        self,
        m: _Mapping,
        key: str,
        field: str,
        *,
        low: float,
        high: float | None = None,
        default: float | None = None,
    ) -> float | None:
        """A number from low to high (a whole number or a decimal like 0.85)."""
        if key not in m:
            if default is None:
                self.error(m.line, field, "missing")
            return default
        value, line = m[key], m.key_lines[key]
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.error(line, field, f"must be a number, got {value!r}")
            return None
        if value < low or (high is not None and value > high):
            between = f"from {low:g} to {high:g}" if high is not None else f"at least {low:g}"
            self.error(line, field, f"must be {between}, got {value:g}")
            return None
        return float(value)

    def items(
        self, m: _Mapping, key: str, field: str, *, required: bool
    ) -> list[tuple[str, Any, int]]:
        """(field path, value, line) for each item of a list; empty when missing or not a list."""
        if key not in m:
            if required:
                self.error(m.line, field, "missing")
            return []
        value = m[key]
        if not isinstance(value, _Sequence):
            self.error(m.key_lines[key], field, f"must be a list, got {value!r}")
            return []
        if len(value) > MAX_ITEMS:
            self.error(m.key_lines[key], field, f"{len(value):,} items; at most {MAX_ITEMS:,}")
            return []
        return [
            (f"{field}[{index}]", item, value.item_lines[index]) for index, item in enumerate(value)
        ]

    def unique(self, seen: dict[str, int], code: str, line: int, field: str, what: str) -> None:
        if code in seen:
            self.error(line, field, f"duplicate {what} '{code}' (first on line {seen[code]})")
        else:
            seen[code] = line


def _venue(check: _Check, document: Any) -> VenueSpec | None:
    top = check.mapping(
        document,
        1,
        "(file)",
        (
            "ground",
            "stands",
            "blocks",
            "gates",
            "concourses",
            "zones",
            "adjacency",
            "layouts",
            "exits",
        ),
    )
    if top is None:
        return None
    ground = None
    if "ground" not in top:
        check.error(top.line, "ground", "missing")
    else:
        ground = _ground(check, top["ground"], top.key_lines["ground"])
    # A stand or block with an error of its own still counts as declared, so that whatever
    # names it is not reported too: one mistake, one error.
    stands, tiers_of = _stands(check, check.items(top, "stands", "stands", required=True))
    blocks, declared = _blocks(check, check.items(top, "blocks", "blocks", required=True), tiers_of)
    block_rows: dict[str, list[str]] = {code: [] for code in declared}
    block_rows |= {block.code: block.rows for block in blocks}
    gates = _gates(check, check.items(top, "gates", "gates", required=False), block_rows)
    concourses = _concourses(
        check, check.items(top, "concourses", "concourses", required=False), block_rows
    )
    zones = _zones(check, check.items(top, "zones", "zones", required=False), block_rows)
    adjacency = _adjacency(
        check, check.items(top, "adjacency", "adjacency", required=False), block_rows
    )
    layouts = _layouts(check, check.items(top, "layouts", "layouts", required=False), zones)
    exits = _exits(check, check.items(top, "exits", "exits", required=False), block_rows)
    if ground is None:
        return None
    return VenueSpec(
        ground=ground,
        stands=stands,
        blocks=blocks,
        gates=gates,
        concourses=concourses,
        zones=zones,
        adjacency=adjacency,
        layouts=layouts,
        exits=exits,
    )


def _ground(check: _Check, value: Any, line: int) -> GroundSpec | None:
    m = check.mapping(
        value, line, "ground", ("code", "name", "layout_note", "plan", "pitch", "capacity")
    )
    if m is None:
        return None
    code = check.text(m, "code", "ground.code", max_length=_max_length(Ground, "code"))
    if code is not None and not re.fullmatch(r"[-a-zA-Z0-9_]+", code):
        check.error(
            m.key_lines["code"], "ground.code", f"must be letters, digits, - and _, got {code!r}"
        )
        code = None
    name = check.text(m, "name", "ground.name", max_length=_max_length(Ground, "name"))
    note = check.text(
        m,
        "layout_note",
        "ground.layout_note",
        max_length=_max_length(Ground, "layout_note"),
        default="",
    )
    width, height = 1000, 1000
    if "plan" in m:
        plan = check.mapping(m["plan"], m.key_lines["plan"], "ground.plan", ("width", "height"))
        if plan is not None:
            width = check.whole_number(plan, "width", "ground.plan.width", minimum=1) or 0
            height = check.whole_number(plan, "height", "ground.plan.height", minimum=1) or 0
    pitch = ""
    if "pitch" in m:
        pitch = _shape(check, m["pitch"], m.key_lines["pitch"], "ground.pitch") or ""
    flow = FlowSpec()
    if "capacity" in m:
        flow = _flow(check, m["capacity"], m.key_lines["capacity"]) or flow
    if code is None or name is None or note is None:
        return None
    return GroundSpec(
        code=code,
        name=name,
        layout_note=note,
        plan_width=width,
        plan_height=height,
        pitch=pitch,
        flow=flow,
        line=m.key_lines["code"],
    )


def _stands(
    check: _Check, items: list[tuple[str, Any, int]]
) -> tuple[list[StandSpec], dict[str, set[str]]]:
    """The valid stands, and the tier codes of every declared stand (valid or not)."""
    stands: list[StandSpec] = []
    tiers_of: dict[str, set[str]] = {}
    seen: dict[str, int] = {}
    for field, value, line in items:
        m = check.mapping(value, line, field, ("code", "name", "tiers", "p_factor", "s_factor"))
        if m is None:
            continue
        p_factor = check.number(m, "p_factor", f"{field}.p_factor", low=0, high=1, default=1)
        s_factor = check.number(m, "s_factor", f"{field}.s_factor", low=0, high=1, default=1)
        code = check.text(m, "code", f"{field}.code", max_length=_max_length(Stand, "code"))
        if code is not None:
            check.unique(seen, code, m.key_lines["code"], f"{field}.code", "stand")
        name = check.text(m, "name", f"{field}.name", max_length=_max_length(Stand, "name"))
        tiers: list[TierSpec] = []
        tier_seen: dict[str, int] = {}
        tier_items = check.items(m, "tiers", f"{field}.tiers", required=True)
        if "tiers" in m and not tier_items:
            check.error(m.key_lines["tiers"], f"{field}.tiers", "a stand needs at least one tier")
        for tier_field, tier_value, tier_line in tier_items:
            tm = check.mapping(tier_value, tier_line, tier_field, ("code", "name"))
            if tm is None:
                continue
            tier_code = check.text(
                tm, "code", f"{tier_field}.code", max_length=_max_length(Tier, "code")
            )
            tier_name = check.text(
                tm, "name", f"{tier_field}.name", max_length=_max_length(Tier, "name")
            )
            if tier_code is not None:
                check.unique(
                    tier_seen, tier_code, tm.key_lines["code"], f"{tier_field}.code", "tier"
                )
            if tier_code is not None and tier_name is not None:
                tiers.append(TierSpec(code=tier_code, name=tier_name))
        if code is not None:
            tiers_of.setdefault(code, set()).update(tier.code for tier in tiers)
        if code is not None and name is not None:
            stands.append(
                StandSpec(
                    code=code,
                    name=name,
                    tiers=tiers,
                    p_factor=p_factor if p_factor is not None else 1.0,
                    s_factor=s_factor if s_factor is not None else 1.0,
                )
            )
    return stands, tiers_of


_BLOCK_FIELDS = (
    "code",
    "name",
    "stand",
    "tier",
    "capacity",
    "rows",
    "seats_per_row",
    "first_seat",
    "shape",
)


def _blocks(
    check: _Check, items: list[tuple[str, Any, int]], tiers_of: dict[str, set[str]]
) -> tuple[list[BlockSpec], set[str]]:
    """The valid blocks, and the codes of all declared blocks (valid or not)."""
    blocks: list[BlockSpec] = []
    seen: dict[str, int] = {}
    total_seats, over = 0, False
    for field, value, line in items:
        m = check.mapping(value, line, field, _BLOCK_FIELDS)
        if m is None:
            continue
        code = check.text(m, "code", f"{field}.code", max_length=_max_length(Block, "code"))
        if code is not None:
            check.unique(seen, code, m.key_lines["code"], f"{field}.code", "block")
        name = check.text(
            m, "name", f"{field}.name", max_length=_max_length(Block, "name"), default=code or ""
        )
        stand = check.text(m, "stand", f"{field}.stand", max_length=_max_length(Stand, "code"))
        if stand is not None and stand not in tiers_of:
            check.error(m.key_lines["stand"], f"{field}.stand", f"unknown stand '{stand}'")
            stand = None
        tier = check.text(m, "tier", f"{field}.tier", max_length=_max_length(Tier, "code"))
        if stand is not None and tier is not None and tier not in tiers_of[stand]:
            check.error(
                m.key_lines["tier"], f"{field}.tier", f"stand '{stand}' has no tier '{tier}'"
            )
            tier = None
        capacity = check.whole_number(m, "capacity", f"{field}.capacity", minimum=0)
        rows = _rows(check, m, f"{field}.rows")
        seats_per_row = check.whole_number(
            m, "seats_per_row", f"{field}.seats_per_row", minimum=0, default=0
        )
        if seats_per_row is not None and seats_per_row > MAX_SEATS_PER_ROW:
            check.error(
                m.key_lines["seats_per_row"],
                f"{field}.seats_per_row",
                f"{seats_per_row:,}; at most {MAX_SEATS_PER_ROW}",
            )
            seats_per_row = None
        if capacity is not None:
            total_seats += capacity
            if total_seats > MAX_SEATS and not over:
                check.error(
                    m.key_lines["capacity"],
                    f"{field}.capacity",
                    f"the blocks so far hold {total_seats:,} seats; a ground at most {MAX_SEATS:,}",
                )
                over = True
        first_seat = check.whole_number(
            m, "first_seat", f"{field}.first_seat", minimum=0, default=1
        )
        # Fewer seats than rows x seats is normal (wheelchair bays, camera platforms); more is not.
        if capacity and rows and seats_per_row and capacity > len(rows) * seats_per_row:
            check.error(
                m.key_lines["capacity"],
                f"{field}.capacity",
                f"{capacity} is more than {len(rows)} rows x {seats_per_row} seats per row",
            )
        shape = None
        if "shape" not in m:
            check.error(m.line, f"{field}.shape", "missing")
        else:
            shape = _shape(check, m["shape"], m.key_lines["shape"], f"{field}.shape")
        if (
            code is None
            or name is None
            or stand is None
            or tier is None
            or capacity is None
            or rows is None
            or seats_per_row is None
            or first_seat is None
            or shape is None
        ):
            continue
        blocks.append(
            BlockSpec(
                code=code,
                name=name,
                stand=stand,
                tier=tier,
                capacity=capacity,
                rows=rows,
                seats_per_row=seats_per_row,
                first_seat=first_seat,
                shape=shape,
            )
        )
    return blocks, set(seen)


_ROW_RANGE = re.compile(r"([A-Z])-([A-Z])|(\d+)-(\d+)")
_ROW_LABEL_LENGTH = _max_length(ZoneBlock, "first_row")


def _expand_rows(text: str) -> list[str] | None:
    """'A-Y' -> A, B, ..., Y; '1-30' -> 1, ..., 30; a single label stays as it is."""
    match = _ROW_RANGE.fullmatch(text)
    if match is None:
        return [text] if len(text) <= _ROW_LABEL_LENGTH and "-" not in text else None
    if match.group(1):
        first, last = ord(match.group(1)), ord(match.group(2))
        return [chr(c) for c in range(first, last + 1)] if first <= last else None
    first, last = int(match.group(3)), int(match.group(4))
    if last - first >= MAX_ROWS:  # refused by _rows; never expanded ('1-99999999')
        return [str(n) for n in range(first, first + MAX_ROWS + 1)]
    return [str(n) for n in range(first, last + 1)] if first <= last else None


def _rows(check: _Check, m: _Mapping, field: str) -> list[str] | None:
    if "rows" not in m:
        return []
    value, line = m["rows"], m.key_lines["rows"]
    if isinstance(value, str):
        rows = _expand_rows(value.strip())
        if rows is None:
            check.error(line, field, f"must be a range like 'A-Y' or '1-30', got {value!r}")
        elif len(rows) > MAX_ROWS:
            check.error(line, field, f"more than {MAX_ROWS} rows, the limit for a block")
            return None
        return rows
    if isinstance(value, _Sequence) and len(value) > MAX_ROWS:
        check.error(line, field, f"{len(value)} rows; at most {MAX_ROWS} in a block")
        return None
    if not isinstance(value, _Sequence):
        check.error(line, field, f"must be a range like 'A-Y' or a list of labels, got {value!r}")
        return None
    rows = []
    seen: dict[str, int] = {}
    for index, item in enumerate(value):
        label = check.label(
            item, value.item_lines[index], f"{field}[{index}]", max_length=_ROW_LABEL_LENGTH
        )
        if label is not None:
            check.unique(seen, label, value.item_lines[index], f"{field}[{index}]", "row")
            rows.append(label)
    return rows if len(rows) == len(value) else None


def _numbers(text: str) -> list[float] | None:
    try:
        return [float(part) for part in text.split(",")]
    except ValueError:
        return None


def _shape(check: _Check, value: Any, line: int, field: str) -> str | None:
    """SVG polygon points, 'x,y x,y x,y ...': at least three points, numbers only."""
    if not isinstance(value, str):
        check.error(line, field, f"must be polygon points like '0,0 10,0 10,10', got {value!r}")
        return None
    points = value.split()
    for point in points:
        numbers = _numbers(point)
        if numbers is None or len(numbers) != 2:
            check.error(line, field, f"point {point!r} is not x,y in numbers")
            return None
    if len(points) < 3:
        check.error(line, field, f"needs at least 3 points, got {len(points)}")
        return None
    return " ".join(points)


def _block_list(
    check: _Check, m: _Mapping, field: str, block_rows: dict[str, list[str]]
) -> list[str]:
    """Block codes listed under `serves`: each must be declared, and listed once."""
    codes: list[str] = []
    seen: set[str] = set()
    for item_field, value, line in check.items(m, "serves", field, required=False):
        code = check.label(value, line, item_field, max_length=_max_length(Block, "code"))
        if code is None:
            continue
        if code not in block_rows:
            check.error(line, item_field, f"unknown block '{code}'")
            continue
        if code in seen:
            check.error(line, item_field, f"block '{code}' is listed twice")
            continue
        seen.add(code)
        codes.append(code)
    return codes


def _gates(
    check: _Check, items: list[tuple[str, Any, int]], block_rows: dict[str, list[str]]
) -> list[GateSpec]:
    gates: list[GateSpec] = []
    seen: dict[str, int] = {}
    for field, value, line in items:
        m = check.mapping(value, line, field, ("code", "name", "position", "turnstiles", "serves"))
        if m is None:
            continue
        code = check.text(m, "code", f"{field}.code", max_length=_max_length(Gate, "code"))
        if code is not None:
            check.unique(seen, code, m.key_lines["code"], f"{field}.code", "gate")
        name = check.text(m, "name", f"{field}.name", max_length=_max_length(Gate, "name"))
        position = check.text(
            m, "position", f"{field}.position", max_length=_max_length(Gate, "position"), default=""
        )
        if position:
            numbers = _numbers(position)
            if numbers is None or len(numbers) != 2:
                check.error(
                    m.key_lines["position"], f"{field}.position", f"must be x,y, got {position!r}"
                )
        turnstiles = _turnstiles(check, m, f"{field}.turnstiles", code or "")
        serves = _block_list(check, m, f"{field}.serves", block_rows)
        if code is not None and name is not None and position is not None:
            gates.append(
                GateSpec(
                    code=code, name=name, position=position, turnstiles=turnstiles, serves=serves
                )
            )
    return gates


def _turnstiles(check: _Check, m: _Mapping, field: str, gate_code: str) -> list[str]:
    if "turnstiles" not in m:
        return []
    value, line = m["turnstiles"], m.key_lines["turnstiles"]
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 0:
            check.error(line, field, f"must be at least 0, got {value}")
            return []
        return [f"{gate_code}{number:02d}" for number in range(1, value + 1)]
    if not isinstance(value, _Sequence):
        check.error(line, field, f"must be a count or a list of codes, got {value!r}")
        return []
    codes: list[str] = []
    seen: dict[str, int] = {}
    for index, item in enumerate(value):
        item_field, item_line = f"{field}[{index}]", value.item_lines[index]
        code = check.label(item, item_line, item_field, max_length=_max_length(Turnstile, "code"))
        if code is not None:
            check.unique(seen, code, item_line, item_field, "turnstile")
            codes.append(code)
    return codes


def _concourses(
    check: _Check, items: list[tuple[str, Any, int]], block_rows: dict[str, list[str]]
) -> list[ConcourseSpec]:
    concourses: list[ConcourseSpec] = []
    seen: dict[str, int] = {}
    for field, value, line in items:
        m = check.mapping(value, line, field, ("code", "name", "serves"))
        if m is None:
            continue
        code = check.text(m, "code", f"{field}.code", max_length=_max_length(Concourse, "code"))
        if code is not None:
            check.unique(seen, code, m.key_lines["code"], f"{field}.code", "concourse")
        name = check.text(m, "name", f"{field}.name", max_length=_max_length(Concourse, "name"))
        serves = _block_list(check, m, f"{field}.serves", block_rows)
        if code is not None and name is not None:
            concourses.append(ConcourseSpec(code=code, name=name, serves=serves))
    return concourses


def _zones(
    check: _Check, items: list[tuple[str, Any, int]], block_rows: dict[str, list[str]]
) -> list[ZoneSpec]:
    zones: list[ZoneSpec] = []
    seen: dict[str, int] = {}
    for field, value, line in items:
        m = check.mapping(value, line, field, ("code", "name", "kind", "default", "blocks"))
        if m is None:
            continue
        code = check.text(m, "code", f"{field}.code", max_length=_max_length(Zone, "code"))
        if code is not None:
            check.unique(seen, code, m.key_lines["code"], f"{field}.code", "zone")
        name = check.text(m, "name", f"{field}.name", max_length=_max_length(Zone, "name"))
        kind = check.text(m, "kind", f"{field}.kind", max_length=_max_length(Zone, "kind"))
        if kind is not None and kind not in ZONE_KINDS:
            check.error(
                m.key_lines["kind"],
                f"{field}.kind",
                f"must be one of {', '.join(ZONE_KINDS)}, got '{kind}'",
            )
            kind = None
        is_default = m.get("default", False)
        if not isinstance(is_default, bool):
            check.error(
                m.key_lines["default"],
                f"{field}.default",
                f"must be true or false, got {is_default!r}",
            )
        members = []
        for item_field, item, item_line in check.items(
            m, "blocks", f"{field}.blocks", required=True
        ):
            member = _zone_member(check, item, item_line, item_field, block_rows)
            if member is not None:
                members.append(member)
        _check_members_once(check, members, field)
        if code is not None and name is not None and kind is not None:
            zones.append(
                ZoneSpec(
                    code=code,
                    name=name,
                    kind=kind,
                    is_default=bool(is_default),
                    members=[member for member, _ in members],
                )
            )
    return zones


def _zone_member(
    check: _Check, value: Any, line: int, field: str, block_rows: dict[str, list[str]]
) -> tuple[ZoneMemberSpec, int] | None:
    """A block code (the whole block) or {block: CODE, rows: A-F} (only those rows)."""
    if not isinstance(value, _Mapping):
        code = check.label(value, line, field, max_length=_max_length(Block, "code"))
        if code is not None and code not in block_rows:
            check.error(line, field, f"unknown block '{code}'")
            return None
        return (ZoneMemberSpec(block=code, first_row="", last_row=""), line) if code else None
    m = check.mapping(value, line, field, ("block", "rows"))
    assert m is not None
    code = check.text(m, "block", f"{field}.block", max_length=_max_length(Block, "code"))
    if code is not None and code not in block_rows:
        check.error(m.key_lines["block"], f"{field}.block", f"unknown block '{code}'")
        return None
    if "rows" not in m:
        return (ZoneMemberSpec(block=code, first_row="", last_row=""), line) if code else None
    rows_line, rows_field = m.key_lines["rows"], f"{field}.rows"
    text = check.label(m["rows"], rows_line, rows_field, max_length=2 * _ROW_LABEL_LENGTH + 1)
    if code is None or text is None:
        return None
    first_row, _, last_row = (part.strip() for part in text.partition("-"))
    last_row = last_row or first_row
    rows = block_rows[code]
    for row in (first_row, last_row):
        if row not in rows:
            check.error(rows_line, rows_field, f"block '{code}' has no row '{row}'")
            return None
    if rows.index(first_row) > rows.index(last_row):
        check.error(rows_line, rows_field, f"row '{first_row}' comes after row '{last_row}'")
        return None
    return ZoneMemberSpec(block=code, first_row=first_row, last_row=last_row), line


def _check_members_once(
    check: _Check, members: list[tuple[ZoneMemberSpec, int]], field: str
) -> None:
    """A block once per zone, or several row ranges of it, but not whole and by rows too."""
    seen: dict[tuple[str, str], int] = {}
    whole = {member.block for member, _ in members if not member.first_row}
    for member, line in members:
        key = (member.block, member.first_row)
        if key in seen or (member.first_row and member.block in whole):
            check.error(line, f"{field}.blocks", f"block '{member.block}' is listed twice")
        seen.setdefault(key, line)


def _adjacency(
    check: _Check, items: list[tuple[str, Any, int]], block_rows: dict[str, list[str]]
) -> list[tuple[str, str]]:
    pairs: list[tuple[str, str]] = []
    seen: set[frozenset[str]] = set()
    for field, value, line in items:
        if not isinstance(value, _Sequence) or len(value) != 2:
            check.error(line, field, f"must be a pair of block codes like [A1, A2], got {value!r}")
            continue
        codes = []
        for index, item in enumerate(value):
            item_field, item_line = f"{field}[{index}]", value.item_lines[index]
            code = check.label(item, item_line, item_field, max_length=_max_length(Block, "code"))
            if code is not None and code not in block_rows:
                check.error(item_line, item_field, f"unknown block '{code}'")
            elif code is not None:
                codes.append(code)
        if len(codes) != 2:
            continue
        first, second = codes
        if first == second:
            check.error(line, field, f"block '{first}' cannot be adjacent to itself")
            continue
        # The same pair twice, either way round, is one adjacency: keep it once.
        if frozenset(codes) not in seen:
            seen.add(frozenset(codes))
            pairs.append((first, second))
    return pairs


def _layouts(
    check: _Check, items: list[tuple[str, Any, int]], zones: list[ZoneSpec]
) -> list[LayoutSpec]:
    """Each layout: zone code -> use, every zone known, no block in two of its zones."""
    by_code = {zone.code: zone for zone in zones}
    layouts: list[LayoutSpec] = []
    seen: dict[str, int] = {}
    for field, value, line in items:
        m = check.mapping(value, line, field, ("code", "name", "zones"))
        if m is None:
            continue
        code = check.text(m, "code", f"{field}.code", max_length=_max_length(Layout, "code"))
        if code is not None:
            check.unique(seen, code, m.key_lines["code"], f"{field}.code", "layout")
        name = check.text(m, "name", f"{field}.name", max_length=_max_length(Layout, "name"))
        uses: dict[str, str] = {}
        if "zones" not in m:
            check.error(m.line, f"{field}.zones", "missing")
        elif not isinstance(m["zones"], _Mapping) or not m["zones"]:
            check.error(
                m.key_lines["zones"],
                f"{field}.zones",
                f"must be a mapping of zone code to {', '.join(LAYOUT_USES)}, got {m['zones']!r}",
            )
        else:
            uses = _layout_zones(check, m["zones"], f"{field}.zones", by_code)
        if code is not None and name is not None and uses:
            layouts.append(LayoutSpec(code=code, name=name, zones=uses))
    return layouts


def _layout_zones(
    check: _Check, zones: _Mapping, field: str, by_code: dict[str, ZoneSpec]
) -> dict[str, str]:
    uses: dict[str, str] = {}
    block_zone: dict[str, list[tuple[str, str]]] = {}
    ok = True
    for zone_code, use in zones.items():
        line, zone_field = zones.key_lines[zone_code], f"{field}.{zone_code}"
        zone = by_code.get(str(zone_code))
        if zone is None:
            check.error(line, zone_field, f"unknown zone '{zone_code}'")
            ok = False
            continue
        if use not in LAYOUT_USES:
            check.error(line, zone_field, f"must be one of {', '.join(LAYOUT_USES)}, got {use!r}")
            ok = False
            continue
        for member in zone.members:
            # Two zones may share a block by rows (a buffer of the front rows), never whole.
            for other, first_row in block_zone.get(member.block, []):
                if other != zone.code and (
                    not first_row or not member.first_row or first_row == member.first_row
                ):
                    check.error(
                        line, zone_field, f"block '{member.block}' is also in zone '{other}'"
                    )
                    ok = False
            block_zone.setdefault(member.block, []).append((zone.code, member.first_row))
        uses[zone.code] = use
    if ok and not {"home", "away"} <= set(uses.values()):
        check.error(zones.line, field, "a layout needs a home zone and an away zone")
        ok = False
    return uses if ok else {}


_FLOW_FIELDS = ("level_rate", "stair_rate", "egress_minutes", "evacuation_minutes")


def _flow(check: _Check, value: Any, line: int) -> FlowSpec | None:
    m = check.mapping(value, line, "ground.capacity", _FLOW_FIELDS)
    if m is None:
        return None
    default = FlowSpec()
    level = check.whole_number(
        m, "level_rate", "ground.capacity.level_rate", minimum=1, default=default.level_rate
    )
    stair = check.whole_number(
        m, "stair_rate", "ground.capacity.stair_rate", minimum=1, default=default.stair_rate
    )
    egress = check.number(
        m, "egress_minutes", "ground.capacity.egress_minutes", low=1, high=8, default=8
    )
    evacuation = check.number(
        m, "evacuation_minutes", "ground.capacity.evacuation_minutes", low=2.5, high=8, default=8
    )
    if level is None or stair is None or egress is None or evacuation is None:
        return None
    return FlowSpec(
        level_rate=level, stair_rate=stair, egress_minutes=egress, evacuation_minutes=evacuation
    )


EXIT_KINDS = tuple(Exit.Kind.values)


def _exits(
    check: _Check, items: list[tuple[str, Any, int]], block_rows: dict[str, list[str]]
) -> list[ExitSpec]:
    exits: list[ExitSpec] = []
    seen: dict[str, int] = {}
    for field, value, line in items:
        m = check.mapping(
            value, line, field, ("code", "name", "width", "kind", "emergency", "serves")
        )
        if m is None:
            continue
        code = check.text(m, "code", f"{field}.code", max_length=_max_length(Exit, "code"))
        if code is not None:
            check.unique(seen, code, m.key_lines["code"], f"{field}.code", "exit")
        name = check.text(
            m, "name", f"{field}.name", max_length=_max_length(Exit, "name"), default=code or ""
        )
        width = check.number(m, "width", f"{field}.width", low=0.5, high=50)
        kind = check.text(m, "kind", f"{field}.kind", max_length=10)
        if kind is not None and kind not in EXIT_KINDS:
            check.error(
                m.key_lines["kind"], f"{field}.kind", f"must be level or stairs, got '{kind}'"
            )
            kind = None
        emergency = m.get("emergency", False)
        if not isinstance(emergency, bool):
            check.error(
                m.key_lines["emergency"],
                f"{field}.emergency",
                f"must be true or false, got {emergency!r}",
            )
        serves = _block_list(check, m, f"{field}.serves", block_rows)
        if "serves" in m and not serves:
            check.error(
                m.key_lines["serves"], f"{field}.serves", "an exit serves at least one block"
            )
        if None not in (code, name, width, kind) and serves:
            exits.append(
                ExitSpec(
                    code=code,  # type: ignore[arg-type]
                    name=name,  # type: ignore[arg-type]
                    width=width,  # type: ignore[arg-type]
                    kind=kind,  # type: ignore[arg-type]
                    emergency_only=bool(emergency),
                    serves=serves,
                )
            )
    return exits
