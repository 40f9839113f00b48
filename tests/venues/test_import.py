"""Importing a ground from a venue file.

A good file is written whole; a bad one is refused with every mistake named by line and field,
and nothing at all is written.
"""

from collections.abc import Callable
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db.models import F, Q, Sum
from django.utils.translation import override

from safeground.accounts.models import Organisation
from safeground.venues.models import (
    Block,
    BlockAdjacency,
    Concourse,
    Gate,
    Ground,
    Stand,
    Tier,
    Turnstile,
    Zone,
    ZoneBlock,
)
from safeground.venues.services import venue_import
from safeground.venues.venue_file import VenueFileError
from tests import factories

pytestmark = pytest.mark.django_db

DEMO_FILE = Path(__file__).resolve().parents[2] / "src/safeground/venues/demo/london-stadium.yaml"
VENUE_MODELS = [
    Ground, Stand, Tier, Block, BlockAdjacency, Gate, Turnstile, Concourse, Zone, ZoneBlock
]  # fmt: skip

LEAGUE_ZONES = [
    "home-north", "home-east", "home-south", "home-west", "home-se-flex",
    "away-se", "buffer-se-east", "buffer-se-south",
]  # fmt: skip
CUP_ZONES = [
    "home-north", "home-east", "home-south", "home-west",
    "away-se-cup", "buffer-se-cup-east", "buffer-se-cup-south",
]  # fmt: skip

WriteVenue = Callable[[str], Path]


def import_errors(path: Path, organisation: Organisation) -> list[str]:
    """The errors an import reports, after checking it wrote nothing."""
    with pytest.raises(VenueFileError) as refused:
        venue_import(path=path, organisation=organisation)
    for model in VENUE_MODELS:
        assert model._default_manager.count() == 0, f"{model.__name__} rows were written"
    return [error.removeprefix(f"{path}:") for error in refused.value.errors]


def neighbours(code: str) -> set[str]:
    block = Block.objects.get(code=code)
    pairs = BlockAdjacency.objects.filter(Q(block=block) | Q(neighbour=block))
    return {
        pair.neighbour.code if pair.block_id == block.id else pair.block.code
        for pair in pairs.select_related("block", "neighbour")
    }


# --- the demo ground ----------------------------------------------------------------------------
# These check the demo's own ground file (the one `make run` and the browser tests load), so they
# import that file; the rest of this module uses small files of its own or the factories' ground.


def test_demo_ground_imports_whole(club: Organisation) -> None:
    ground = venue_import(path=DEMO_FILE, organisation=club)

    assert ground.code == "london-stadium"
    assert ground.organisation == club
    assert "not a surveyed plan" in ground.layout_note
    assert (ground.plan_width, ground.plan_height) == (800, 1000)
    assert ground.stands.count() == 4
    assert Tier.objects.filter(stand__ground=ground).count() == 8
    assert ground.blocks.count() == 72
    assert ground.blocks.aggregate(seats=Sum("capacity"))["seats"] == 57_240
    assert ground.gates.count() == 10
    assert Turnstile.objects.filter(gate__ground=ground).count() == 95
    assert ground.concourses.count() == 8
    assert ground.zones.count() == 11
    # Two rings of 36 blocks each closing on itself, and each lower block under an upper one.
    assert ground.adjacencies.count() == 36 + 36 + 36


def test_demo_block_is_read_as_written(club: Organisation) -> None:
    venue_import(path=DEMO_FILE, organisation=club)

    block = Block.objects.select_related("tier__stand").get(code="N-L1")
    assert block.name == "North Lower 1"
    assert (block.tier.stand.name, block.tier.name) == ("North Stand", "Lower tier")
    assert block.rows[0] == "A" and block.rows[-1] == "Y" and len(block.rows) == 25
    assert (block.capacity, block.seats_per_row, block.first_seat) == (850, 34, 1)
    assert len(block.shape.split()) == 8


def test_demo_adjacency_is_found_from_either_block(club: Organisation) -> None:
    venue_import(path=DEMO_FILE, organisation=club)

    assert neighbours("N-L1") == {"N-L2", "W-L10", "N-U1"}
    assert neighbours("W-L10") == {"W-L9", "N-L1", "W-U10"}
    assert neighbours("N-L8") == {"N-L7", "E-L1", "N-U8"}
    assert neighbours("E-L1") == {"N-L8", "E-L2", "E-U1"}
    assert "E-L10" in neighbours("S-L1") and "S-L1" in neighbours("E-L10")
    assert not BlockAdjacency.objects.filter(block_id__gte=F("neighbour_id")).exists()


def test_demo_gates_and_concourses_serve_their_blocks(club: Organisation) -> None:
    venue_import(path=DEMO_FILE, organisation=club)

    away_gate = Gate.objects.get(code="F")
    assert "away" in away_gate.name
    away_and_buffers = set(
        ZoneBlock.objects.filter(
            zone__code__in=[
                "away-se", "buffer-se-east", "buffer-se-south",
                "away-se-cup", "buffer-se-cup-east", "buffer-se-cup-south",
            ]
        ).values_list("block__code", flat=True)
    )  # fmt: skip
    assert set(away_gate.blocks.values_list("code", flat=True)) == away_and_buffers
    assert Turnstile.objects.get(gate=away_gate, code="F01")
    # Every block has a way in, and every block is on one concourse.
    assert not Block.objects.filter(gates=None).exists()
    for block in Block.objects.all():
        assert block.concourses.count() == 1, block.code


def test_demo_away_sections_are_sized_for_league_and_cup(club: Organisation) -> None:
    venue_import(path=DEMO_FILE, organisation=club)

    def seats(zone: str) -> int:
        return sum(m.block.capacity for m in ZoneBlock.objects.filter(zone__code=zone))

    assert seats("away-se") == 3_400
    assert seats("away-se-cup") == 5_100
    assert Zone.objects.get(code="away-se").is_default
    assert not Zone.objects.get(code="away-se-cup").is_default


@pytest.mark.parametrize("layout", [LEAGUE_ZONES, CUP_ZONES], ids=["league", "cup"])
def test_demo_layout_puts_every_block_in_exactly_one_zone(
    club: Organisation, layout: list[str]
) -> None:
    venue_import(path=DEMO_FILE, organisation=club)

    members = list(
        ZoneBlock.objects.filter(zone__code__in=layout).values_list("block__code", "first_row")
    )
    codes = [code for code, _ in members]
    assert all(first_row == "" for _, first_row in members)  # whole blocks only
    assert len(codes) == len(set(codes)), "a block is in two zones"
    assert set(codes) == set(Block.objects.values_list("code", flat=True))


def test_default_layout_is_the_league_one(club: Organisation) -> None:
    venue_import(path=DEMO_FILE, organisation=club)

    assert set(Zone.objects.filter(is_default=True).values_list("code", flat=True)) == set(
        LEAGUE_ZONES
    )


def test_a_ground_is_imported_once(club: Organisation, venue_file: WriteVenue) -> None:
    path = venue_file(factories.venue_text())
    venue_import(path=path, organisation=club)

    with pytest.raises(VenueFileError, match="ground 'riverside-park' already exists"):
        venue_import(path=path, organisation=club)
    assert Ground.objects.count() == 1
    assert Block.objects.count() == 7


# --- a small valid file, and the parts it can carry ---------------------------------------------


SMALL = """
    ground: {code: little-ground, name: Little Ground}
    stands:
      - {code: N, name: North Stand, tiers: [{code: L, name: Lower tier}]}
    blocks:
      - {code: N1, stand: N, tier: L, capacity: 100, rows: A-E, seats_per_row: 20, shape: "0,0 10,0 10,10"}
      - {code: N2, stand: N, tier: L, capacity: 60, rows: [1, 2, 3], seats_per_row: 20, shape: "10,0 20,0 20,10"}
    gates:
      - {code: A, name: Gate A, position: "5,-5", turnstiles: [A1, A2, A3], serves: [N1, N2]}
    zones:
      - {code: buffer, name: Buffer, kind: buffer, blocks: [{block: N1, rows: A-B}, N2]}
    adjacency:
      - [N2, N1]
      - [N1, N2]
"""  # noqa: E501


def test_small_file_defaults_and_row_ranges(club: Organisation, venue_file: WriteVenue) -> None:
    ground = venue_import(path=venue_file(SMALL), organisation=club)

    assert (ground.plan_width, ground.plan_height, ground.pitch_shape) == (1000, 1000, "")
    first, second = Block.objects.order_by("code")
    assert first.name == "N1"  # a block's name defaults to its code
    assert first.rows == ["A", "B", "C", "D", "E"]
    assert second.rows == ["1", "2", "3"]
    assert list(Turnstile.objects.values_list("code", flat=True)) == ["A1", "A2", "A3"]
    member = ZoneBlock.objects.get(block=first)
    assert (member.first_row, member.last_row) == ("A", "B")
    assert not member.zone.is_default
    # Given twice, either way round: stored once, lower id first.
    pair = BlockAdjacency.objects.get()
    assert (pair.block, pair.neighbour) == (first, second)


def test_names_in_welsh_are_kept_beside_the_english_and_shown_to_a_welsh_reader(
    club: Organisation, venue_file: WriteVenue
) -> None:
    path = venue_file("""
        ground: {code: g, name: G}
        stands:
          - code: E
            name: East Stand
            names: {cy: "Eisteddle'r Dwyrain"}
            tiers: [{code: L, name: Lower tier, names: {cy: Haen isaf}}]
        blocks:
          - {code: E-L1, name: East Lower 1, names: {cy: Dwyrain Isaf 1}, stand: E, tier: L,
             capacity: 100, shape: "0,0 1,0 1,1"}
        gates:
          - {code: A, name: Gate A, names: {cy: Giât A}, turnstiles: 1, serves: [E-L1]}
        concourses:
          - {code: E-L, name: East lower concourse, names: {cy: Cyntedd isaf y Dwyrain}, serves: [E-L1]}
        zones:
          - {code: away, name: Away section, names: {cy: Adran oddi cartref}, kind: away, blocks: [E-L1]}
    """)  # noqa: E501
    venue_import(path=path, organisation=club)

    stand, zone = Stand.objects.get(), Zone.objects.get()
    assert (stand.name, stand.names) == ("East Stand", {"cy": "Eisteddle'r Dwyrain"})
    places = [stand, Tier.objects.get(), Block.objects.get(), Gate.objects.get(), zone]
    places.append(Concourse.objects.get())
    with override("cy"):
        assert [str(place) for place in places] == [
            "Eisteddle'r Dwyrain",
            "Eisteddle'r Dwyrain, Haen isaf",
            "Dwyrain Isaf 1",
            "Giât A",
            "Adran oddi cartref",
            "Cyntedd isaf y Dwyrain",
        ]
    with override("en-gb"):
        assert [place.local_name for place in (stand, zone)] == ["East Stand", "Away section"]


def test_names_in_an_unknown_language_or_not_a_mapping_are_refused(
    club: Organisation, venue_file: WriteVenue
) -> None:
    path = venue_file("""
        ground: {code: g, name: G}
        stands:
          - {code: E, name: East Stand, names: {fr: Tribune Est}, tiers: [{code: L, name: L}]}
        blocks:
          - {code: E1, names: Dwyrain 1, stand: E, tier: L, capacity: 100, shape: "0,0 1,0 1,1"}
        zones:
          - {code: z, name: Z, names: {cy: ""}, kind: away, blocks: [E1]}
    """)

    assert import_errors(path, club) == [
        "3: stands[0].names.fr: unknown language 'fr'; expected one of cy",
        '5: blocks[0].names: must be a mapping of language to text, like {cy: "..."}',
        "7: zones[0].names.cy: must not be empty",
    ]


# --- mistakes: each named by line and field, nothing written -------------------------------------


def test_block_in_an_undeclared_stand_or_tier(club: Organisation, venue_file: WriteVenue) -> None:
    path = venue_file("""
        ground: {code: g, name: G}
        stands:
          - {code: N, name: North Stand, tiers: [{code: L, name: Lower tier}]}
        blocks:
          - {code: N1, stand: N, tier: L, capacity: 100, shape: "0,0 1,0 1,1"}
          - {code: Z1, stand: Z, tier: L, capacity: 100, shape: "0,0 1,0 1,1"}
          - {code: N2, stand: N, tier: U, capacity: 100, shape: "0,0 1,0 1,1"}
    """)

    assert import_errors(path, club) == [
        "6: blocks[1].stand: unknown stand 'Z'",
        "7: blocks[2].tier: stand 'N' has no tier 'U'",
    ]


def test_duplicate_block_code(club: Organisation, venue_file: WriteVenue) -> None:
    path = venue_file("""
        ground: {code: g, name: G}
        stands:
          - {code: N, name: North Stand, tiers: [{code: L, name: Lower tier}]}
        blocks:
          - {code: N1, stand: N, tier: L, capacity: 100, shape: "0,0 1,0 1,1"}
          - {code: N1, stand: N, tier: L, capacity: 100, shape: "0,0 1,0 1,1"}
    """)

    assert import_errors(path, club) == [
        "6: blocks[1].code: duplicate block 'N1' (first on line 5)"
    ]


def test_capacity_that_is_not_a_whole_number(club: Organisation, venue_file: WriteVenue) -> None:
    path = venue_file("""
        ground: {code: g, name: G}
        stands:
          - {code: N, name: North Stand, tiers: [{code: L, name: Lower tier}]}
        blocks:
          - code: N1
            stand: N
            tier: L
            capacity: abc
            shape: "0,0 1,0 1,1"
          - {code: N2, stand: N, tier: L, capacity: 12.5, shape: "0,0 1,0 1,1"}
    """)

    assert import_errors(path, club) == [
        "8: blocks[0].capacity: must be a whole number, got 'abc'",
        "10: blocks[1].capacity: must be a whole number, got 12.5",
    ]


def test_gate_serving_an_unknown_block(club: Organisation, venue_file: WriteVenue) -> None:
    path = venue_file("""
        ground: {code: g, name: G}
        stands:
          - {code: N, name: North Stand, tiers: [{code: L, name: Lower tier}]}
        blocks:
          - {code: N1, stand: N, tier: L, capacity: 100, shape: "0,0 1,0 1,1"}
        gates:
          - code: A
            name: Gate A
            turnstiles: [A1, A1]
            serves:
              - N1
              - N9
        concourses:
          - {code: N-L, name: North lower, serves: [N1, N8]}
    """)

    assert import_errors(path, club) == [
        "9: gates[0].turnstiles[1]: duplicate turnstile 'A1' (first on line 9)",
        "12: gates[0].serves[1]: unknown block 'N9'",
        "14: concourses[0].serves[1]: unknown block 'N8'",
    ]


def test_adjacency_to_an_unknown_block_or_itself(
    club: Organisation, venue_file: WriteVenue
) -> None:
    path = venue_file("""
        ground: {code: g, name: G}
        stands:
          - {code: N, name: North Stand, tiers: [{code: L, name: Lower tier}]}
        blocks:
          - {code: N1, stand: N, tier: L, capacity: 100, shape: "0,0 1,0 1,1"}
        adjacency:
          - [N1, N7]
          - [N1, N1]
          - [N1]
    """)

    assert import_errors(path, club) == [
        "7: adjacency[0][1]: unknown block 'N7'",
        "8: adjacency[1]: block 'N1' cannot be adjacent to itself",
        "9: adjacency[2]: must be a pair of block codes like [A1, A2], got ['N1']",
    ]


def test_malformed_yaml(club: Organisation, venue_file: WriteVenue) -> None:
    path = venue_file("""
        ground: {code: g, name: G}
        stands:
          - {code: N, name: North Stand]
    """)

    assert import_errors(path, club) == [
        "3: not valid YAML: expected ',' or '}', but got ']'",
    ]


def test_zone_kind_and_zone_blocks(club: Organisation, venue_file: WriteVenue) -> None:
    path = venue_file("""
        ground: {code: g, name: G}
        stands:
          - {code: N, name: North Stand, tiers: [{code: L, name: Lower tier}]}
        blocks:
          - {code: N1, stand: N, tier: L, capacity: 100, rows: A-J, shape: "0,0 1,0 1,1"}
        zones:
          - {code: away, name: Away, kind: visitors, blocks: [N1]}
          - code: buffer
            name: Buffer
            kind: buffer
            default: yes please
            blocks:
              - N2
              - {block: N1, rows: A-Z}
              - {block: N1, rows: F-B}
    """)

    assert import_errors(path, club) == [
        "7: zones[0].kind: must be one of home, away, buffer, other, got 'visitors'",
        "11: zones[1].default: must be true or false, got 'yes please'",
        "13: zones[1].blocks[0]: unknown block 'N2'",
        "14: zones[1].blocks[1].rows: block 'N1' has no row 'Z'",
        "15: zones[1].blocks[2].rows: row 'F' comes after row 'B'",
    ]


def test_missing_section_and_fields_point_at_the_parent(
    club: Organisation, venue_file: WriteVenue
) -> None:
    path = venue_file("""
        ground:
          code: g
        stands:
          - code: N
            tiers: [{code: L, name: Lower tier}]
    """)

    assert import_errors(path, club) == [
        "2: ground.name: missing",
        "4: stands[0].name: missing",
        "1: blocks: missing",
    ]


def test_bad_shapes_and_unknown_fields(club: Organisation, venue_file: WriteVenue) -> None:
    path = venue_file("""
        ground: {code: g, name: G, pitch: "0,0 1,1"}
        stands:
          - {code: N, name: North Stand, tiers: [{code: L, name: Lower tier}]}
        blocks:
          - {code: N1, stand: N, tier: L, capacity: 100, shape: "0,0 1,x 1,1"}
          - {code: N2, stand: N, tier: L, capacity: 100, shape: "0,0 1,1", capcity: 5}
    """)

    assert import_errors(path, club) == [
        "1: ground.pitch: needs at least 3 points, got 2",
        "5: blocks[0].shape: point '1,x' is not x,y in numbers",
        "6: blocks[1].capcity: unknown field; expected one of code, name, names, stand, tier, "
        "capacity, rows, seats_per_row, first_seat, shape",
        "6: blocks[1].shape: needs at least 3 points, got 2",
    ]


def test_every_mistake_is_reported_at_once(club: Organisation, venue_file: WriteVenue) -> None:
    path = venue_file("""
        ground: {code: g, name: G}
        stands:
          - {code: N, name: North Stand, tiers: [{code: L, name: Lower tier}]}
          - {code: N, name: Also North, tiers: [{code: L, name: Lower tier}]}
        blocks:
          - {code: N1, stand: N, tier: L, capacity: -3, shape: "0,0 1,0 1,1"}
        gates:
          - {code: A, name: Gate A, serves: [N1]}
          - {code: A, name: Gate A again, serves: [N1]}
    """)

    assert import_errors(path, club) == [
        "4: stands[1].code: duplicate stand 'N' (first on line 3)",
        "6: blocks[0].capacity: must be at least 0, got -3",
        "9: gates[1].code: duplicate gate 'A' (first on line 8)",
    ]


def test_a_file_that_is_not_there(club: Organisation, tmp_path: Path) -> None:
    with pytest.raises(VenueFileError, match="cannot read the file"):
        venue_import(path=tmp_path / "missing.yaml", organisation=club)


# --- the command --------------------------------------------------------------------------------


def test_command_imports_and_summarises(club: Organisation, venue_file: WriteVenue) -> None:
    out = StringIO()
    path = venue_file(factories.venue_text(turnstiles=4))
    call_command("import_venue", str(path), stdout=out)  # the only club: no --organisation

    assert out.getvalue().strip() == (
        "Imported Riverside Park: 2 stands, 7 blocks, 1400 seats, 3 gates, 12 turnstiles"
    )
    assert Ground.objects.get().organisation == club


def test_command_prints_every_error_and_fails(club: Organisation, venue_file: WriteVenue) -> None:
    path = venue_file("""
        ground: {code: g, name: G}
        stands:
          - {code: N, name: North Stand, tiers: [{code: L, name: Lower tier}]}
        blocks:
          - {code: N1, stand: Z, tier: L, capacity: lots, shape: "0,0 1,0 1,1"}
    """)
    err = StringIO()

    with pytest.raises(CommandError, match=r"2 errors in .*venue\.yaml; nothing was imported"):
        call_command("import_venue", str(path), organisation=club.slug, stderr=err)
    assert err.getvalue().splitlines() == [
        f"{path}:5: blocks[0].stand: unknown stand 'Z'",
        f"{path}:5: blocks[0].capacity: must be a whole number, got 'lots'",
    ]
    assert Ground.objects.count() == 0


def test_command_needs_the_club_named_when_there_are_several(
    club: Organisation, venue_file: WriteVenue
) -> None:
    Organisation.objects.create(name="Other Club", slug="other-club", kind="club")
    path = str(venue_file(factories.venue_text()))

    with pytest.raises(CommandError, match="name the club with --organisation"):
        call_command("import_venue", path)
    with pytest.raises(CommandError, match="unknown organisation 'nowhere'"):
        call_command("import_venue", path, organisation="nowhere")


# --- layouts ------------------------------------------------------------------------------------


def test_demo_layouts_are_the_league_and_the_cup(club: Organisation) -> None:
    ground = venue_import(path=DEMO_FILE, organisation=club)
    layouts = {layout.code: layout for layout in ground.layouts.all()}
    assert set(layouts) == {"league", "cup-large-away"}
    assert sorted(layouts["league"].zones.values_list("zone__code", flat=True)) == sorted(
        LEAGUE_ZONES
    )
    assert dict(layouts["cup-large-away"].zones.values_list("zone__code", "use")) == {
        **dict.fromkeys(CUP_ZONES[:4], "home"),
        "away-se-cup": "away",
        "buffer-se-cup-east": "buffer",
        "buffer-se-cup-south": "buffer",
    }


def test_a_bad_layout_is_refused_with_its_line_and_key(
    club: Organisation, venue_file: WriteVenue
) -> None:
    path = venue_file("""
        ground: {code: g, name: G}
        stands:
          - {code: N, name: North Stand, tiers: [{code: L, name: Lower tier}]}
        blocks:
          - {code: N1, stand: N, tier: L, capacity: 100, rows: A-J, shape: "0,0 1,0 1,1"}
          - {code: N2, stand: N, tier: L, capacity: 100, rows: A-J, shape: "0,0 1,0 1,1"}
        zones:
          - {code: home, name: Home, kind: home, blocks: [N1, N2]}
          - {code: away, name: Away, kind: away, blocks: [N2]}
          - {code: front, name: Front rows, kind: buffer, blocks: [{block: N1, rows: A-B}]}
        layouts:
          - {code: league, name: League, zones: {home: home, away: away}}
          - code: cup
            name: Cup
            zones:
              away: visitors
              nowhere: home
          - {code: league, name: Again, zones: {home: home}}
          - {code: bare, name: Bare}
    """)

    assert import_errors(path, club) == [
        "12: layouts[0].zones.away: block 'N2' is also in zone 'home'",
        "16: layouts[1].zones.away: must be one of home, away, buffer, got 'visitors'",
        "17: layouts[1].zones.nowhere: unknown zone 'nowhere'",
        "18: layouts[2].code: duplicate layout 'league' (first on line 12)",
        "18: layouts[2].zones: a layout needs a home zone and an away zone",
        "19: layouts[3].zones: missing",
    ]
