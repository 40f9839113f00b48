"""A season the club sets up itself: fixtures added and edited on the safety officer's page, by
`safeground add-fixture`, from a season CSV and through the API; sharing and unsharing recorded.
Bad input is refused at its field (or row and column) and nothing is half-written."""

from io import StringIO
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse
from django.utils import translation

from safeground.append_only import AppendOnlyError
from safeground.matches.models import Fixture, FixtureShare, ShareRecord
from safeground.matches.season_file import SeasonFileError, season_file_parse
from safeground.matches.selectors import fixtures_visible_to
from safeground.venues.models import Layout
from tests import factories

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("no_second_factor")]

GROUND = "riverside-park"


def fixture_page_data(**changes: object) -> dict:
    return {
        "opponent": "Northgate Albion",
        "competition": "Regional League",
        "stage": "",
        "kickoff": "2030-08-10T15:00",
        "layout": "league",
        "away_allocation": "300",
        "shared_with": ["riverside-constabulary"],
    } | changes


def test_the_safety_officer_adds_a_fixture_on_the_page(match_day, client_for) -> None:
    safety = client_for("safety")
    page = safety.get(reverse("fixture_new", args=[GROUND]))
    assert b"League" in page.content and b"Riverside Constabulary" in page.content

    answer = safety.post(reverse("fixture_new", args=[GROUND]), fixture_page_data())

    made = Fixture.objects.get(away_club__name="Northgate Albion")
    assert answer.status_code == 302 and answer["Location"] == reverse("fixture", args=[made.pk])
    assert made.layout.code == "league" and made.away_allocation == 300
    assert dict(made.zones.values_list("zone__code", "use")) == factories.LEAGUE_LAYOUT
    assert made.kickoff.isoformat() == "2030-08-10T14:00:00+00:00"  # 15:00 BST
    assert list(made.shares.values_list("organisation__slug", "purpose")) == [
        ("riverside-constabulary", "police")
    ]
    record = ShareRecord.objects.get(fixture=made)
    assert (record.action, record.by) == ("shared", match_day.cast["safety"])
    assert made in fixtures_visible_to(match_day.cast["police"])


def test_bad_input_on_the_page_is_shown_at_each_field_and_nothing_is_written(
    match_day, client_for
) -> None:
    before = Fixture.objects.count()
    answer = client_for("safety").post(
        reverse("fixture_new", args=[GROUND]),
        fixture_page_data(opponent="", kickoff="next saturday", layout="", away_allocation="lots"),
    )
    assert answer.status_code == 200
    errors = answer.context["form"].errors
    assert errors["opponent"] == ["is missing"]
    assert errors["kickoff"] == ["'next saturday' is not a date and time (use 2026-12-05 15:00)"]
    assert errors["layout"] == ["is missing; one of cup, league"]
    assert errors["away_allocation"] == ["'lots' is not a whole number"]
    assert Fixture.objects.count() == before and not ShareRecord.objects.filter(
        fixture__away_club__name="Northgate Albion"
    )


def test_editing_a_fixture_moves_its_zones_and_records_the_unsharing(match_day, client_for) -> None:
    safety = client_for("safety")
    safety.post(reverse("fixture_new", args=[GROUND]), fixture_page_data())
    made = Fixture.objects.get(away_club__name="Northgate Albion")

    answer = safety.post(
        reverse("fixture_edit", args=[GROUND, made.pk]),
        fixture_page_data(layout="cup", shared_with=[], away_allocation="500"),
    )

    assert answer.status_code == 302
    made.refresh_from_db()
    assert (made.layout.code, made.away_allocation) == ("cup", 500)
    assert dict(made.zones.values_list("zone__code", "use")) == factories.CUP_LAYOUT
    assert not made.shares.exists()
    assert list(ShareRecord.objects.filter(fixture=made).values_list("action", flat=True)) == [
        "shared",
        "unshared",
    ]
    assert made not in fixtures_visible_to(match_day.cast["police"])


def test_share_records_cannot_be_changed_or_deleted(match_day) -> None:
    record = ShareRecord.objects.filter(fixture=match_day.cup_tie).first()
    assert record is not None
    with pytest.raises(AppendOnlyError):
        record.delete()
    with pytest.raises(AppendOnlyError):
        ShareRecord.objects.filter(pk=record.pk).update(action="unshared")


# --- the API ------------------------------------------------------------------------------------


def test_the_api_adds_changes_shares_and_unshares_a_fixture(match_day, client_for) -> None:
    safety = client_for("safety")
    made = safety.post(
        "/api/fixtures",
        {
            "ground": GROUND,
            "opponent": "Northgate Albion",
            "competition": "County Cup",
            "stage": "Final",
            "kickoff": "2031-05-01 19:45",
            "layout": "cup",
            "away_allocation": 500,
        },
        content_type="application/json",
    )
    assert made.status_code == 201, made.content
    fixture_id = made.json()["id"]
    assert made.json()["layout"] == "cup" and made.json()["shared_with"] == []

    changed = safety.patch(
        f"/api/fixtures/{fixture_id}", {"away_allocation": 550}, content_type="application/json"
    )
    assert changed.status_code == 200 and changed.json()["away_allocation"] == 550
    assert changed.json()["stage"] == "Final"  # untouched fields stay

    shared = safety.post(
        f"/api/fixtures/{fixture_id}/shares",
        {"organisation": "riverside-constabulary"},
        content_type="application/json",
    )
    assert shared.json()["shared_with"] == ["riverside-constabulary"]
    assert FixtureShare.objects.get(fixture_id=fixture_id).purpose == "police"
    assert (
        safety.delete(f"/api/fixtures/{fixture_id}/shares/riverside-constabulary").status_code
        == 204
    )
    again = safety.delete(f"/api/fixtures/{fixture_id}/shares/riverside-constabulary")
    assert again.status_code == 404 and again.json()["field"] == "shared_with"
    assert ShareRecord.objects.filter(fixture_id=fixture_id).count() == 2


def test_a_kickoff_with_an_offset_past_what_postgresql_stores_is_taken_as_its_moment(
    match_day, client_for
) -> None:
    """ISO 8601 allows offsets to ±23:59, the API's schema too; PostgreSQL stores none past
    ±15:59 (the schema fuzz found the 500). The moment is kept, in UTC."""
    made = client_for("safety").post(
        "/api/fixtures",
        {
            "ground": GROUND,
            "opponent": "Northgate Albion",
            "competition": "County Cup",
            "kickoff": "2031-05-01T22:00:01+20:37",
            "layout": "cup",
        },
        content_type="application/json",
    )
    assert made.status_code == 201, made.content
    kickoff = Fixture.objects.get(pk=made.json()["id"]).kickoff
    assert kickoff.isoformat() == "2031-05-01T01:23:01+00:00"


def test_an_allocation_past_what_the_database_holds_is_refused_not_a_500(
    match_day, client_for
) -> None:
    """The league match's zones were set one by one (no layout to check the number against):
    PostgreSQL's integer column would refuse the save with a server error."""
    league = match_day.league_match
    assert league.layout_id is None
    refused = client_for("safety").patch(
        f"/api/fixtures/{league.pk}", {"away_allocation": 2**40}, content_type="application/json"
    )
    assert refused.status_code == 422 and refused.json()["field"] == "body.away_allocation"
    league.refresh_from_db()
    assert league.away_allocation == 1500


def test_the_api_refuses_bad_input_with_the_field_and_writes_nothing(match_day, client_for) -> None:
    safety = client_for("safety")
    before = Fixture.objects.count()
    refused = safety.post(
        "/api/fixtures",
        {
            "ground": GROUND,
            "opponent": "Northgate Albion",
            "competition": "County Cup",
            "kickoff": "2031-05-01 19:45",
            "layout": "cup",
            "shared_with": ["riverside-constabulary", "nobody-here"],
        },
        content_type="application/json",
    )
    assert refused.status_code == 404  # well formed, naming an organisation not there
    assert refused.json() == {
        "code": "fixture_refused",
        "field": "shared_with",
        "detail": "no organisation 'nobody-here'",
    }
    patch = safety.patch(
        f"/api/fixtures/{match_day.cup_tie.pk}",
        {"layout": "grand-final"},
        content_type="application/json",
    )
    assert patch.status_code == 404 and patch.json()["field"] == "layout"  # no such layout
    assert Fixture.objects.count() == before


# --- the command line ---------------------------------------------------------------------------


def test_add_fixture_adds_one_and_names_the_option_at_fault(match_day) -> None:
    out = StringIO()
    call_command(
        "add_fixture",
        ground=GROUND,
        opponent="Northgate Albion",
        competition="Regional League",
        kickoff="2030-09-01 15:00",
        layout="league",
        shared_with=["riverside-constabulary"],
        stdout=out,
    )
    assert "Added Riverside Athletic v Northgate Albion on Sun 01 Sep 2030 15:00" in out.getvalue()
    err = StringIO()
    with pytest.raises(CommandError, match="the fixture was not added"):
        call_command(
            "add_fixture",
            ground=GROUND,
            opponent="Northgate Albion",
            competition="Regional League",
            kickoff="2030-09-01 15:00",
            layout="derby",
            stderr=err,
        )
    assert "--layout: no layout 'derby' at Riverside Park; one of cup, league" in err.getvalue()


def test_a_season_file_is_imported_whole(match_day, tmp_path: Path) -> None:
    season = tmp_path / "season.csv"
    season.write_text(
        "opponent,competition,stage,kickoff,layout,away_allocation,shared_with\n"
        "Northgate Albion,Regional League,,2030-08-10 15:00,league,300,riverside-constabulary\n"
        "Eastport Rovers,County Cup,Final,2030-08-17 19:45,cup,550,"
        "riverside-constabulary;eastport-rovers\n",
        encoding="utf-8",
    )
    call_command("import_fixtures", str(season), ground=GROUND, stdout=StringIO())
    final = Fixture.objects.get(stage="Final")
    assert dict(final.shares.values_list("organisation__slug", "purpose")) == {
        "riverside-constabulary": "police",
        "eastport-rovers": "away_club",
    }
    assert Fixture.objects.filter(away_club__name="Northgate Albion").count() == 1


def test_a_season_file_with_errors_names_each_row_and_column_and_imports_nothing(
    match_day, tmp_path: Path
) -> None:
    season = tmp_path / "season.csv"
    season.write_text(
        "opponent,competition,kickoff,layout,away_allocation\n"
        "Northgate Albion,Regional League,2030-08-10 15:00,league,300\n"
        ",Regional League,2030-08-17 15:00,league,300\n"
        "Harbour Town,Regional League,31/02/2030 15:00,derby,-\n",
        encoding="utf-8",
    )
    before = Fixture.objects.count()
    err = StringIO()
    with pytest.raises(CommandError, match=r"4 errors in .*; nothing was imported"):
        call_command("import_fixtures", str(season), ground=GROUND, stderr=err)
    assert err.getvalue().splitlines() == [
        f"{season}: line 3: opponent: is missing",
        f"{season}: line 4: kickoff: '31/02/2030 15:00' is not a date and time"
        " (use 2026-12-05 15:00)",
        f"{season}: line 4: layout: no layout 'derby' at Riverside Park; one of cup, league",
        f"{season}: line 4: away_allocation: '-' is not a whole number",
    ]
    assert Fixture.objects.count() == before
    with translation.override("cy"), pytest.raises(SeasonFileError) as welsh:
        season_file_parse(ground=match_day.ground, data=season.read_bytes())
    assert welsh.value.errors == [
        "llinell 3: opponent: mae ar goll",
        "llinell 4: kickoff: nid yw '31/02/2030 15:00' yn ddyddiad ac amser"
        " (defnyddiwch 2026-12-05 15:00)",
        "llinell 4: layout: dim cynllun 'derby' yn Riverside Park; un o cup, league",
        "llinell 4: away_allocation: nid yw '-' yn rhif cyfan",
    ]


def test_a_season_file_is_imported_on_the_page(match_day, client_for) -> None:
    season = SimpleUploadedFile(
        "season.csv",
        b"opponent,competition,kickoff,layout,away_allocation,shared_with\n"
        b"Northgate Albion,Regional League,2030-08-10 15:00,league,300,riverside-constabulary\n"
        b"Eastport Rovers,County Cup,2030-08-17 19:45,cup,550,\n",
    )
    answer = client_for("safety").post(
        reverse("fixtures_season_import", args=[GROUND]), {"file": season}
    )
    assert answer.status_code == 200
    made = Fixture.objects.filter(kickoff__year=2030)
    assert sorted(made.values_list("away_club__name", flat=True)) == [
        "Eastport Rovers",
        "Northgate Albion",
    ]
    for fixture in made:
        assert reverse("fixture", args=[fixture.pk]).encode() in answer.content
    record = ShareRecord.objects.get(fixture__away_club__name="Northgate Albion")
    assert record.by == match_day.cast["safety"]


def test_a_bad_season_file_on_the_page_names_every_line_and_imports_nothing(
    match_day, client_for
) -> None:
    season = SimpleUploadedFile(
        "season.csv",
        b"opponent,competition,kickoff,layout\n"
        b"Northgate Albion,Regional League,2030-08-10 15:00,league\n"
        b"Harbour Town,Regional League,2030-08-17 15:00,derby\n",
    )
    before = Fixture.objects.count()
    answer = client_for("safety").post(
        reverse("fixtures_season_import", args=[GROUND]), {"file": season}
    )
    assert answer.status_code == 400
    assert (
        "line 3: layout: no layout &#x27;derby&#x27; at Riverside Park; one of cup, league"
        in answer.content.decode()
    )
    assert Fixture.objects.count() == before


def test_an_away_allocation_beyond_the_away_zones_seats_is_refused(match_day, client_for) -> None:
    league = Layout.objects.get(ground__code=GROUND, code="league")
    away = league.zones.get(use="away").zone
    assert not away.members.exclude(first_row="").exists()  # whole blocks: seats add up
    seats = sum(member.block.capacity for member in away.members.all())
    before = Fixture.objects.count()

    answer = client_for("safety").post(
        reverse("fixture_new", args=[GROUND]), fixture_page_data(away_allocation=str(seats + 1))
    )

    errors = answer.context["form"].errors
    assert errors["away_allocation"][0].startswith(
        f"{seats + 1} is more than the safe capacity of the away zone ({away.name}: "
    )
    assert Fixture.objects.count() == before
    no_away = client_for("safety").post(
        reverse("fixture_new", args=[GROUND]), fixture_page_data(away_allocation="0")
    )
    assert no_away.status_code == 302
