"""The Green Guide safe capacity, checked against a hand computation from the venue file."""

from pathlib import Path

import pytest
from django.urls import reverse
from django.utils import translation

from safeground.accounts.models import Role
from safeground.matches.selectors import fixture_safe_capacities
from safeground.venues.capacity import stand_capacities, zone_capacities
from safeground.venues.services import venue_import
from safeground.venues.venue_file import VenueFileError
from tests import factories

pytestmark = pytest.mark.django_db

VENUE = """
ground: {code: brook-lane, name: Brook Lane, capacity: {level_rate: 82, stair_rate: 66}}
stands:
  - {code: N, name: North Stand, p_factor: 0.9, s_factor: 0.95, tiers: [{code: L, name: Lower}]}
  - {code: S, name: South Stand, s_factor: 0.8, tiers: [{code: L, name: Lower}]}
blocks:
  - {code: N1, stand: N, tier: L, capacity: 500, rows: A-J, shape: "0,0 1,0 1,1"}
  - {code: N2, stand: N, tier: L, capacity: 300, rows: A-J, shape: "0,0 1,0 1,1"}
  - {code: S1, stand: S, tier: L, capacity: 400, rows: A-J, shape: "0,0 1,0 1,1"}
gates:
  - {code: A, name: Gate A, turnstiles: 1, serves: [N1, N2]}
  - {code: B, name: Gate B, turnstiles: 2, serves: [S1]}
zones:
  - {code: north, name: North, kind: home, blocks: [N1, N2]}
  - {code: front, name: South front rows, kind: buffer, blocks: [{block: S1, rows: A-E}]}
exits:
  - {code: N-V1, name: North vomitory, width: 1.5, kind: stairs, serves: [N1]}
  - {code: N-V2, name: North concourse exit, width: 1.2, kind: level, serves: [N1, N2]}
  - {code: N-P, name: North pitch gate, width: 2.0, kind: level, emergency: true, serves: [N2]}
  - {code: S-V1, name: South vomitory, width: 1.0, kind: stairs, serves: [S1]}
"""


@pytest.fixture
def ground(tmp_path: Path):
    path = tmp_path / "brook-lane.yaml"
    path.write_text(VENUE, encoding="utf-8")
    return venue_import(path=path, organisation=factories.organisation(name="Brook Lane FC"))


def test_a_stands_capacity_is_the_lowest_of_the_four_figures(ground) -> None:
    north = dict((stand.code, c) for stand, c in stand_capacities(ground))["N"]
    # By hand: 800 seats; holding 800 x 0.9 x 0.95; entry 1 turnstile x 660 an hour; exit
    # (1.5 m x 66 + 1.2 m x 82) x 8 minutes; evacuation adds the pitch gate, 2.0 m x 82 x 8.
    assert north.seats == 800
    assert north.holding.value == int(800 * 0.9 * 0.95) == 684
    assert north.entry.value == 660
    assert north.exit.value == int((1.5 * 66 + 1.2 * 82) * 8) == 1579
    assert north.evacuation.value == int((1.5 * 66 + 1.2 * 82 + 2.0 * 82) * 8) == 2891
    assert (north.safe, north.limited_by) == (660, "Entry capacity")
    assert north.entry.working == ["Gate A: 1 turnstiles × 660/h × 1 h = 660"]


def test_a_zone_of_some_rows_takes_its_share_of_the_gates_and_exits(ground) -> None:
    zones = {z.code: z.pk for z in ground.zones.all()}
    front = zone_capacities(ground, [zones["front"]])[zones["front"]]
    # Rows A-E: half of S1's 400 seats, so half of Gate B and of the south vomitory.
    assert front.seats == 200
    assert front.holding.value == int(200 * 0.8) == 160
    assert front.entry.value == int(2 * 660 * 200 / 400) == 660
    assert front.exit.value == front.evacuation.value == int(1.0 * 66 * 8 * 200 / 400) == 264
    assert front.safe == 160
    assert front.exit.working == [
        "South vomitory: 1 m stairway × 66/m/min × 8 min egress × 200 of its 400 seats = 264"
    ]


def test_the_evacuation_time_is_a_parameter(ground, settings) -> None:
    settings.SAFEGROUND_TURNSTILE_RATE = 800
    north = dict((s.code, c) for s, c in stand_capacities(ground, evacuation_minutes=2.5))["N"]
    assert north.evacuation.value == int((1.5 * 66 + 1.2 * 82 + 2.0 * 82) * 2.5) == 903
    assert north.entry.value == 800
    assert (north.safe, north.limited_by) == (684, "Holding capacity")


def test_the_capacity_page_shows_the_working(ground, no_second_factor) -> None:
    safety = factories.member(ground.organisation, Role.SAFETY_OFFICER)
    client = factories.logged_in(safety)
    page = client.get(reverse("ground_capacity", args=["brook-lane"]) + "?evacuation=2.5")
    assert page.status_code == 200
    text = page.content.decode()
    assert "North vomitory: 1.5 m stairway × 66/m/min × 2.5 min evacuation = 247" in text
    assert "safe capacity <strong data-safe>660</strong>" in text
    bad = client.get(reverse("ground_capacity", args=["brook-lane"]) + "?evacuation=12")
    assert bad.status_code == 400
    assert "the evacuation time must be from 2.5 to 8 minutes, got 12" in bad.content.decode()


def test_a_fixtures_zones_have_their_safe_capacity(match_day) -> None:
    capacities = fixture_safe_capacities(match_day.league_match)
    by_code = {z.zone.code: capacities[z.zone_id] for z in match_day.league_match.zones.all()}
    away = by_code["away-south"]  # S-L1 and S-L2: 400 seats; the small ground has no exits
    assert (away.seats, away.safe, away.exit.value) == (400, 400, None)
    assert away.entry.value == int(10 * 660 * 400 / 600)


def test_bad_capacity_inputs_are_refused_with_line_and_key(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(
        VENUE.replace("p_factor: 0.9", "p_factor: 1.4")
        .replace("width: 1.5", "width: wide")
        .replace("kind: level, serves: [N1, N2]", "kind: ramp, serves: [N1, N2]")
        .replace("stair_rate: 66}", "stair_rate: 66, evacuation_minutes: 10}"),
        encoding="utf-8",
    )
    with pytest.raises(VenueFileError) as refused:
        venue_import(path=path, organisation=factories.organisation(name="Brook Lane FC"))
    assert [e.removeprefix(f"{path}:") for e in refused.value.errors] == [
        "2: ground.capacity.evacuation_minutes: must be from 2.5 to 8, got 10",
        "4: stands[0].p_factor: must be from 0 to 1, got 1.4",
        "17: exits[0].width: must be a number, got 'wide'",
        "18: exits[1].kind: must be level or stairs, got 'ramp'",
    ]


def test_the_figures_and_their_working_are_in_the_readers_language(ground) -> None:
    with translation.override("cy"):
        north = dict((stand.code, c) for stand, c in stand_capacities(ground))["N"]
    assert (north.safe, north.limited_by) == (660, "Capasiti mynediad")
    assert north.entry.working == ["Gate A: 1 giât dro × 660/awr × 1 awr = 660"]
    assert north.holding.working == ["800 sedd × (P) 0.90 × (S) 0.95 = 684"]
