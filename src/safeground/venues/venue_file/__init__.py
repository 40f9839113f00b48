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

The YAML is read by `safeground/yaml_file.py` (line numbers, the size and alias limits, the base
check); each section is checked in a module of its own: `ground.py` (ground, stands), `blocks.py`,
`places.py` (gates, concourses, exits), `zones.py` (zones, adjacency, layouts); `specs.py` holds
what they return.
"""

from pathlib import Path
from typing import Any

from safeground.errors import FileRefused
from safeground.yaml_file import (
    MAX_ALIASES,
    MAX_FILE_BYTES,
    MAX_ITEMS,
    MAX_NODES,
    yaml_load,
    yaml_text,
)

from .blocks import read_blocks
from .ground import read_ground, read_stands
from .places import read_concourses, read_exits, read_gates
from .specs import (
    LAYOUT_USES,
    MAX_ROWS,
    MAX_SEATS,
    MAX_SEATS_PER_ROW,
    ZONE_KINDS,
    BlockSpec,
    ConcourseSpec,
    ExitSpec,
    FlowSpec,
    GateSpec,
    GroundSpec,
    LayoutSpec,
    StandSpec,
    TierSpec,
    VenueCheck,
    VenueSpec,
    ZoneMemberSpec,
    ZoneSpec,
)
from .zones import read_adjacency, read_layouts, read_zones

__all__ = [
    "LAYOUT_USES",
    "MAX_ALIASES",
    "MAX_FILE_BYTES",
    "MAX_ITEMS",
    "MAX_NODES",
    "MAX_ROWS",
    "MAX_SEATS",
    "MAX_SEATS_PER_ROW",
    "ZONE_KINDS",
    "BlockSpec",
    "ConcourseSpec",
    "ExitSpec",
    "FlowSpec",
    "GateSpec",
    "GroundSpec",
    "LayoutSpec",
    "StandSpec",
    "TierSpec",
    "VenueFileError",
    "VenueSpec",
    "ZoneMemberSpec",
    "ZoneSpec",
    "venue_file_parse",
    "venue_file_read",
]


class VenueFileError(FileRefused):
    """The venue file is refused; `errors` lists every problem as `file:line: field: message`."""

    code = "venue_file_refused"


def venue_file_read(*, path: Path) -> VenueSpec:
    text = yaml_text(path=path, refused=VenueFileError, what="a venue file")
    return venue_file_parse(text=text, filename=str(path))


def venue_file_parse(*, text: str, filename: str) -> VenueSpec:
    document = yaml_load(text=text, filename=filename, refused=VenueFileError, what="a venue file")
    check = VenueCheck(filename)
    venue = read_venue(check, document)
    if check.errors or venue is None:
        raise VenueFileError(check.errors)
    return venue


def read_venue(check: VenueCheck, document: Any) -> VenueSpec | None:
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
        ground = read_ground(check, top["ground"], top.key_lines["ground"])
    # A stand or block with an error of its own still counts as declared, so that whatever
    # names it is not reported too: one mistake, one error.
    stands, tiers_of = read_stands(check, check.items(top, "stands", "stands", required=True))
    blocks, declared = read_blocks(
        check, check.items(top, "blocks", "blocks", required=True), tiers_of
    )
    block_rows: dict[str, list[str]] = {code: [] for code in declared}
    block_rows |= {block.code: block.rows for block in blocks}
    gates = read_gates(check, check.items(top, "gates", "gates", required=False), block_rows)
    concourses = read_concourses(
        check, check.items(top, "concourses", "concourses", required=False), block_rows
    )
    zones = read_zones(check, check.items(top, "zones", "zones", required=False), block_rows)
    adjacency = read_adjacency(
        check, check.items(top, "adjacency", "adjacency", required=False), block_rows
    )
    layouts = read_layouts(check, check.items(top, "layouts", "layouts", required=False), zones)
    exits = read_exits(check, check.items(top, "exits", "exits", required=False), block_rows)
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
