"""An arrest recorded from its "Arrest" log entry in one step (issue 27): no subject yet, no
offence named by the entries, the Home Office group from the whole list and the arrested person's
club, which the season's arrests by club then shows."""

import pytest
from django.urls import reverse
from django.utils import translation

from safeground.casework.models import Case, Outcome
from safeground.casework.services import CaseworkError, arrest_record, outcome_record
from safeground.incidents.services import Place
from safeground.reports.season import SeasonFilter, season
from tests import factories

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("no_second_factor")]


@pytest.fixture
def arrest_entry(match_day):
    return factories.report(
        match_day.cup_tie, category="arrest", text="One detained at the away turnstiles",
        place=Place(block="S-L2"),
    )  # fmt: skip


def by_club(match_day) -> dict[str, int]:
    found = season(match_day.ground, SeasonFilter())
    return {row["club"]: row["arrests"] for row in found.arrests_by_club}


def test_an_arrest_from_its_entry_with_no_subject_opens_a_case_and_counts_for_the_away_club(
    match_day, arrest_entry
):
    safety = match_day.cast["safety"]
    assert by_club(match_day) == {"Not known": 1}  # the log's arrest, before it is recorded
    with translation.override("cy"):
        assert by_club(match_day) == {"Anhysbys": 1}
        offences = season(match_day.ground, SeasonFilter()).arrests_by_offence
    assert [row["offence"] for row in offences] == ["Heb ei gofnodi mewn achos"]
    arrest = arrest_record(
        entry=arrest_entry, by=safety, home_office_offence="pitch_incursion", club="away",
        reference="RC/27/1",
    )  # fmt: skip
    assert arrest.subject is None and arrest.kind == Outcome.Kind.ARREST
    assert (arrest.home_office_offence, arrest.club, arrest.reference) == (
        "pitch_incursion", "away", "RC/27/1",
    )  # fmt: skip
    assert list(arrest.case.entries.all()) == [arrest_entry]
    assert "Pitch incursion" in arrest.case.events.last().detail
    # The log's arrest and its outcome are one arrest, now the away club's.
    assert by_club(match_day) == {match_day.cup_tie.away_club.name: 1}


def test_a_second_arrest_from_the_same_entry_goes_into_its_case(match_day, arrest_entry):
    safety = match_day.cast["safety"]
    first = arrest_record(entry=arrest_entry, by=safety, home_office_offence="alcohol",
                          club="home", reference="RC/27/2")  # fmt: skip
    second = arrest_record(entry=arrest_entry, by=safety, home_office_offence="alcohol",
                           club="other", reference="RC/27/3")  # fmt: skip
    assert first.case_id == second.case_id
    assert Case.objects.filter(entries=arrest_entry).count() == 1
    clubs = by_club(match_day)
    assert clubs[match_day.cup_tie.home_club.name] == 1 and clubs["Another club"] == 1


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"home_office_offence": "shoplifting"}, "home_office_offence"),
        ({"club": "visitors"}, "club"),
        ({"reference": "   "}, "reference"),
    ],
)
def test_a_bad_arrest_is_refused_naming_the_field_and_writes_nothing(
    match_day, arrest_entry, fields, field
):
    given = {"home_office_offence": "alcohol", "club": "away", "reference": "RC/27/4"} | fields
    with pytest.raises(CaseworkError) as refused:
        arrest_record(entry=arrest_entry, by=match_day.cast["safety"], **given)
    assert refused.value.field == field
    assert not Case.objects.filter(entries=arrest_entry).exists()


def test_on_the_case_page_an_arrest_needs_no_subject_nor_an_offence_of_the_entries(match_day):
    """What the issue hit: a case whose entries name no offence refused every arrest."""
    cup, officer = match_day.cup_tie, match_day.cast["banofficer"]
    case = factories.case(cup, entries=[factories.report(cup, category="arrest")], by=officer)
    arrest = outcome_record(case=case, by=officer, kind="arrest", home_office_offence="missile",
                            club="away", reference="RC/27/5")  # fmt: skip
    assert (arrest.subject, arrest.offence, arrest.home_office_offence) == (None, "", "missile")


def test_the_arrest_form_records_it_and_a_bad_one_is_a_form_error(match_day, arrest_entry,
                                                                  client_for):  # fmt: skip
    client = client_for("safety")
    url = reverse("entry_arrest", args=[match_day.cup_tie.pk, arrest_entry.pk])
    page = client.get(url)
    assert page.status_code == 200
    assert "One detained at the away turnstiles" in page.content.decode()
    refused = client.post(url, {"home_office_offence": "shoplifting", "club": "away"})
    assert refused.status_code == 400
    html = refused.content.decode()
    assert 'data-error="home_office_offence"' in html and 'data-error="reference"' in html
    assert not Outcome.objects.exists()
    done = client.post(
        url, {"home_office_offence": "public_disorder", "club": "away", "reference": "RC/27/6"}
    )
    arrest = Outcome.objects.get()
    assert done.status_code == 302 and done["Location"] == reverse("case", args=[arrest.case_id])
    assert arrest.club == "away" and arrest.by == match_day.cast["safety"]


def test_an_entry_of_another_match_is_not_found(match_day, arrest_entry, client_for):
    url = reverse("entry_arrest", args=[match_day.league_match.pk, arrest_entry.pk])
    assert client_for("safety").get(url).status_code == 404


def test_the_arrest_form_reads_its_defaults_from_the_entry_and_the_matchs_police_force(
    match_day, client_for
):
    cup = match_day.cup_tie
    entry = factories.report(cup, category="arrest", text="Arrest 1: public order offence")
    page = client_for("safety").get(reverse("entry_arrest", args=[cup.pk, entry.pk]))
    form = page.context["form"]
    assert form["home_office_offence"].value() == "public_disorder"
    assert form["force"].value() == factories.POLICE_FORCE
    assert "another" not in form.fields  # nothing recorded from it yet


def test_a_second_arrest_from_the_same_entry_is_warned_of_naming_the_first(
    match_day, arrest_entry, client_for
):
    cup, client = match_day.cup_tie, client_for("safety")
    url = reverse("entry_arrest", args=[cup.pk, arrest_entry.pk])
    arrest = {"home_office_offence": "public_disorder", "club": "away", "reference": "RC/27/7"}
    assert client.post(url, arrest).status_code == 302

    page = client.get(url).content.decode()
    assert "data-arrest-already" in page and "ref. RC/27/7 (Public disorder)" in page
    second = arrest | {"reference": "RC/27/8"}
    refused = client.post(url, second)
    assert refused.status_code == 400 and 'data-error="another"' in refused.content.decode()
    assert Outcome.objects.count() == 1
    # A second person arrested from the same report: confirmed, recorded.
    assert client.post(url, second | {"another": "on"}).status_code == 302
    assert Outcome.objects.filter(kind="arrest").count() == 2
