"""Arrests in the season's figures: the log's arrests and the cases' arrest outcomes counted once,
split by the Home Office's offence groups and by the arrested supporters' club."""

import pytest

from safeground.casework.models import Outcome
from safeground.casework.services import CaseworkError, outcome_record, subject_add
from safeground.incidents.models import LogEntry
from safeground.incidents.services import Place
from safeground.reports.season import SeasonFilter, season
from tests import factories

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("no_second_factor")]


@pytest.fixture
def arrests(match_day):
    """Three arrests at the cup tie: one logged and recorded in a case (an away ticket holder,
    for missile throwing), one recorded only in a case (someone not identified, violent
    disorder), one logged with no case."""
    cup, officer = match_day.cup_tie, match_day.cast["banofficer"]
    thrown = factories.report(cup, category="missile", place=Place(block="S-L2"))
    held = factories.report(cup, category="arrest", place=Place(block="S-L2"))
    first = factories.case(cup, entries=[thrown, held], by=officer)
    holder = factories.ticket(cup, block="S-L2", end="away", barcode="AWAY-ARREST")
    outcome_record(
        case=first, by=officer, kind=Outcome.Kind.ARREST,
        subject=subject_add(case=first, by=officer, kind="ticket_holder", ticket=holder),
        offence=thrown.category.offence, force="Riverside Constabulary", reference="CR-1",
    )  # fmt: skip
    fight = factories.report(cup, category="disorder", place=Place(block="N-L1"))
    second = factories.case(cup, entries=[fight], by=officer, title="Fight on the concourse")
    outcome_record(
        case=second, by=officer, kind=Outcome.Kind.ARREST,
        subject=subject_add(case=second, by=officer, kind="unidentified", description="tall"),
        offence=fight.category.offence, home_office_offence="violent_disorder",
        force="Riverside Constabulary", reference="CR-2",
    )  # fmt: skip
    factories.report(cup, category="arrest", place=Place(outside="Station approach"))
    return match_day


def test_an_arrest_in_the_log_and_its_case_counts_once_and_one_only_in_a_case_counts_too(arrests):
    cup = arrests.cup_tie
    logged = LogEntry.objects.filter(fixture=cup, kind="report", category__code="arrest").count()
    in_cases_only = Outcome.objects.filter(case__fixture=cup, kind="arrest").exclude(
        case__entries__category__code="arrest"
    )
    found = season(arrests.ground, SeasonFilter())
    match = next(m for m in found.matches if m["id"] == cup.pk)
    assert match["arrests"] == logged + in_cases_only.count() == 3


def test_arrests_by_home_office_offence_group_and_by_club(arrests):
    cup = arrests.cup_tie
    found = season(arrests.ground, SeasonFilter())
    groups = dict(Outcome.HomeOfficeOffence.choices)
    recorded = {
        groups[code]: Outcome.objects.filter(kind="arrest", home_office_offence=code).count()
        for code in ("missile", "violent_disorder")
    }
    not_in_a_case = found.totals["arrests"] - Outcome.objects.filter(kind="arrest").count()
    assert {r["offence"]: r["arrests"] for r in found.arrests_by_offence} == {
        **recorded,
        "Not recorded in a case": not_in_a_case,
    }
    away = Outcome.objects.filter(kind="arrest", subject__ticket__end="away").count()
    assert {r["club"]: r["arrests"] for r in found.arrests_by_club} == {
        cup.away_club.name: away,
        "Not known": found.totals["arrests"] - away,
    }


def test_an_arrest_takes_its_group_from_the_case_unless_the_officer_chooses_another(match_day):
    cup, officer = match_day.cup_tie, match_day.cast["banofficer"]
    flare = factories.report(cup, category="pyrotechnic", place=Place(block="S-L1"))
    case = factories.case(cup, entries=[flare], by=officer)
    subject = subject_add(case=case, by=officer, kind="unidentified", description="hooded")
    made = outcome_record(
        case=case, by=officer, kind="arrest", subject=subject, offence=flare.category.offence,
        force="Riverside Constabulary", reference="CR-3",
    )  # fmt: skip
    assert made.home_office_offence == Outcome.HomeOfficeOffence.PYROTECHNICS
    with pytest.raises(CaseworkError) as refused:
        outcome_record(
            case=case, by=officer, kind="arrest", subject=subject,
            offence=flare.category.offence, home_office_offence="shoplifting",
            force="Riverside Constabulary", reference="CR-4",
        )  # fmt: skip
    assert refused.value.field == "home_office_offence"


def test_the_season_page_shows_arrests_by_offence_and_club(arrests, client_for):
    from django.urls import reverse

    page = client_for("safety").get(reverse("season", args=[arrests.ground.code]))
    assert page.status_code == 200
    html = page.content.decode()
    assert (
        "Missile throwing" in html
        and "Violent disorder" in html
        and "Not recorded in a case" in html
    )
    assert arrests.cup_tie.away_club.name in html
