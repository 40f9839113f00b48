"""The safety officer sets up a match: adds the fixture on the ground's page, shares it with the
police, imports its tickets from a CSV on the fixture's page; the police commander sees it, a
commander of another force does not."""

import pytest
from playwright.sync_api import expect

from safeground.accounts.models import Organisation, Role
from safeground.accounts.services import organisation_create, user_create
from safeground.demo.season import DEMO_PASSWORD
from safeground.entry.models import Ticket
from safeground.matches.models import Fixture

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

TICKETS = (
    "barcode,name,date_of_birth,block,row,seat,end\n"
    "SEASON-1,Alex Tarrfold,1990-01-02,N-L1,A,1,home\n"
    "SEASON-2,Sam Dornlade,1988-05-06,S-L2,B,7,away\n"
)


def test_a_fixture_added_and_shared_on_the_page_gets_its_tickets_and_only_its_police_see_it(
    site, new_page, log_in, tmp_path
) -> None:
    other_force = organisation_create(
        name="Riverside Constabulary", kind=Organisation.Kind.POLICE_FORCE
    )
    user_create(
        username="otherpolice",
        password=DEMO_PASSWORD,
        organisation=other_force,
        role=Role.POLICE_COMMANDER,
        first_name="Ash",
        last_name="Merrow",
    )
    page = log_in(new_page(), "safety")
    page.goto(f"{site}/grounds/london-stadium/")
    page.get_by_role("link", name="Add a fixture").click()
    page.get_by_label("Opponent").fill("Northgate Albion")
    page.get_by_label("Competition").fill("Premier League")
    page.get_by_label("Kick-off (local time)").fill("2030-08-10T15:00")
    page.get_by_label("Zone layout").select_option("league")
    page.get_by_label("Away allocation (tickets)").fill("3000")
    page.get_by_label("Metropolitan Police Service (Police force)").check()
    page.get_by_role("button", name="Add the fixture").click()

    expect(page.locator("[data-fixture-title]")).to_have_text("West Ham United v Northgate Albion")
    expect(page.locator("[data-layout]")).to_have_text("League")
    expect(page.locator("[data-shared-with]")).to_contain_text("Metropolitan Police Service")

    csv = tmp_path / "tickets.csv"
    csv.write_text(TICKETS, encoding="utf-8")
    page.locator("[data-tickets-form] input[type=file]").set_input_files(str(csv))
    page.get_by_role("button", name="Import the tickets").click()
    expect(page.locator("[data-import-report]")).to_contain_text("Imported: 2 new")
    fixture = Fixture.objects.get(away_club__name="Northgate Albion")
    assert Ticket.objects.filter(fixture=fixture).count() == 2

    police = log_in(new_page(), "police")
    police.goto(f"{site}/")
    expect(police.locator("[data-coming]")).to_contain_text("West Ham United v Northgate Albion")
    other = log_in(new_page(), "otherpolice")
    other.goto(f"{site}/")
    expect(other.locator("[data-coming]")).not_to_contain_text("Northgate Albion")
    assert other.goto(f"{site}/fixtures/{fixture.pk}/").status == 403  # type: ignore[union-attr]


def test_a_season_imported_on_the_page_lists_its_fixtures_and_a_bad_file_names_its_lines(
    site, new_page, log_in, tmp_path
) -> None:
    page = log_in(new_page(), "safety")
    page.goto(f"{site}/grounds/london-stadium/")
    page.get_by_role("link", name="Import a season").click()

    bad = tmp_path / "bad.csv"
    bad.write_text(
        "opponent,competition,kickoff,layout\nNorthgate Albion,Premier League,someday,league\n",
        encoding="utf-8",
    )
    page.locator("[data-season-form] input[type=file]").set_input_files(str(bad))
    page.get_by_role("button", name="Import the fixtures").click()
    expect(page.locator("[data-import-errors]")).to_contain_text(
        "line 2: kickoff: 'someday' is not a date and time"
    )
    assert not Fixture.objects.filter(away_club__name="Northgate Albion").exists()

    good = tmp_path / "season.csv"
    good.write_text(
        "opponent,competition,kickoff,layout,shared_with\n"
        "Northgate Albion,Premier League,2030-08-10 15:00,league,metropolitan-police-service\n"
        "Harbour Town,Premier League,2030-08-24 15:00,league,\n",
        encoding="utf-8",
    )
    page.locator("[data-season-form] input[type=file]").set_input_files(str(good))
    page.get_by_role("button", name="Import the fixtures").click()
    report = page.locator("[data-import-report]")
    expect(report).to_contain_text("Imported 2 fixtures")
    report.get_by_role("link", name="West Ham United v Harbour Town").click()
    expect(page.locator("[data-fixture-title]")).to_have_text("West Ham United v Harbour Town")
