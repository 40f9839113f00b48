"""The police's arrest return for a match as a CSV (`safeground import-arrests`): checked whole,
every bad line listed with its number, nothing written unless all of it is right."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.utils import translation

from safeground.casework.arrest_file import ArrestsRefused, parse_arrests
from safeground.casework.models import Case, Outcome
from safeground.casework.services import ARREST_RETURN, arrest_record
from safeground.incidents.services import Place
from safeground.reports.season import SeasonFilter, season
from tests import factories

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("no_second_factor")]

GOOD = """Offence group,Club,Reference,Time
Pitch incursion,away,RC/1,2016-10-26 21:40
alcohol,Home,RC/2,
Violent disorder,not known,RC/3,26/10/2016 22:05
missile,other,RC/4,
"""


def run(fixture, text: str, tmp_path) -> str:
    path = tmp_path / "arrests.csv"
    path.write_text(text)
    out = StringIO()
    call_command("import_arrests", str(path), fixture=fixture.pk, by="safety", stdout=out,
                 stderr=StringIO())  # fmt: skip
    return out.getvalue()


def test_a_good_file_is_imported_into_the_return_case_and_counted_by_group_and_club(
    match_day, tmp_path
):
    cup = match_day.cup_tie
    said = run(cup, GOOD.replace("2016-10-26", f"{cup.kickoff:%Y-%m-%d}").replace(
        "26/10/2016", f"{cup.kickoff:%d/%m/%Y}"), tmp_path)  # fmt: skip
    assert "Imported 4 arrests" in said
    case = Case.objects.get(title=ARREST_RETURN)
    assert sorted(case.outcomes.values_list("reference", "home_office_offence", "club")) == [
        ("RC/1", "pitch_incursion", "away"), ("RC/2", "alcohol", "home"),
        ("RC/3", "violent_disorder", "not_known"), ("RC/4", "missile", "other"),
    ]  # fmt: skip
    found = season(match_day.ground, SeasonFilter())
    assert {r["club"]: r["arrests"] for r in found.arrests_by_club} == {
        cup.away_club.name: 1, cup.home_club.name: 1, "Another club": 1, "Not known": 1,
    }  # fmt: skip


def test_an_arrest_recorded_from_the_log_is_not_counted_again(match_day, tmp_path):
    cup = match_day.cup_tie
    entry = factories.report(cup, category="arrest", place=Place(block="S-L2"))
    arrest_record(entry=entry, by=match_day.cast["safety"], home_office_offence="alcohol",
                  club="away", reference="RC/2")  # fmt: skip
    said = run(cup, "offence,club,reference\nalcohol,away,RC/2\nalcohol,home,RC/9\n", tmp_path)
    assert "Imported 1 arrest for" in said and "already recorded: RC/2" in said
    assert Outcome.objects.filter(kind="arrest").count() == 2


def test_a_file_with_bad_lines_lists_every_one_and_writes_nothing(match_day, tmp_path):
    cup = match_day.cup_tie
    bad = (
        "offence_group;club;reference;time\n"
        "shoplifting;away;RC/1;\n"  # line 2: not a Home Office group
        "alcohol;visitors;RC/2;\n"  # line 3: not a club
        "alcohol;home;;\n"  # line 4: no reference
        "alcohol;home;RC/5;yesterday\n"  # line 5: not a time
        "alcohol;home;RC/6;\n"
    )
    with pytest.raises(ArrestsRefused) as refused:
        parse_arrests(bad.encode())
    assert [e.split(":")[0:2] for e in refused.value.errors] == [
        ["line 2", " offence_group"], ["line 3", " club"], ["line 4", " reference"],
        ["line 5", " time"],
    ]  # fmt: skip
    with pytest.raises(CommandError, match="4 errors"):
        run(cup, bad, tmp_path)
    assert not Outcome.objects.exists() and not Case.objects.exists()


def test_a_repeated_reference_or_a_time_far_from_kick_off_refuses_the_whole_file(
    match_day, tmp_path
):
    cup = match_day.cup_tie
    far = cup.kickoff.replace(year=cup.kickoff.year - 1)
    text = (
        "offence_group,club,reference,time\n"
        "alcohol,away,RC/1,\n"
        "alcohol,away,RC/1,\n"
        f"missile,home,RC/3,{far.isoformat()}\n"
    )
    err = StringIO()
    path = tmp_path / "arrests.csv"
    path.write_text(text)
    with pytest.raises(CommandError, match="2 errors"):
        call_command("import_arrests", str(path), fixture=cup.pk, by="safety", stderr=err)
    assert "line 3: reference: 'RC/1' is also at line 2" in err.getvalue()
    assert "line 4: time:" in err.getvalue()
    assert not Outcome.objects.exists()


def test_a_file_without_its_columns_is_refused_naming_them(match_day, tmp_path):
    with pytest.raises(ArrestsRefused) as refused:
        parse_arrests(b"group,ref\nalcohol,RC/1\n")
    assert refused.value.errors == [
        "line 1: header: no 'club' column (found: group, ref)",
    ]


def test_a_files_line_problems_are_in_the_readers_language_fields_unchanged(match_day):
    bad = (
        "offence_group;club;reference;time\n"
        "shoplifting;away;RC/1;\n"
        "alcohol;visitors;RC/2;\n"
        "alcohol;home;;\n"
        "alcohol;home;RC/5;yesterday\n"
    )
    with translation.override("cy"), pytest.raises(ArrestsRefused) as refused:
        parse_arrests(bad.encode())
    errors = refused.value.errors
    assert errors[0].startswith("llinell 2: offence_group: nid yw 'shoplifting' yn un o grwpiau")
    assert errors[1:] == [
        "llinell 3: club: rhaid i 'visitors' fod yn home, away, other neu not_known",
        "llinell 4: reference: mae ar goll",
        "llinell 5: time: nid yw 'yesterday' yn amser fel 2016-10-26 21:05",
    ]
    with translation.override("cy"), pytest.raises(ArrestsRefused) as empty:
        parse_arrests(b"   ")
    assert empty.value.errors == ["llinell 1: file: mae'n wag (dim pennawd, dim arestiadau)"]


def test_the_readme_lists_every_offence_group_and_club_code_the_file_and_api_take() -> None:
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    for code in [*Outcome.HomeOfficeOffence.values, *Outcome.Club.values]:
        assert f"`{code}`" in readme, code
