"""The ban officer starts a fixture's whole league check from its page and watches it run in the
background (docs/adr/0015, fourth Update): holders checked out of how many, started, finished,
none failed. This test's server plays the league's exchange too. The people are invented."""

from datetime import date, timedelta

import pytest
from playwright.sync_api import expect

from safeground import signing
from safeground.exchange import services
from safeground.matches.models import Fixture
from tests import factories

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_ban_officer_starts_the_league_check_and_sees_its_progress(
    site, settings, new_page, log_in
):
    settings.SAFEGROUND_ROLE = "exchange"
    settings.SAFEGROUND_EXCHANGE_URL = site
    services.club_enrol(name="Riverside Athletic", contact="security@riverside.example",
                        public_key=signing.public_key_json()["public_key"])  # fmt: skip
    cup_tie = Fixture.objects.filter(ground__organisation__name="West Ham United").first()
    assert cup_tie is not None
    fixture = Fixture.objects.create(
        ground=cup_tie.ground, home_club=cup_tie.home_club, away_club=cup_tie.away_club,
        competition=cup_tie.competition, kickoff=cup_tie.kickoff + timedelta(days=60),
    )  # fmt: skip
    for n in range(40):
        factories.ticket(fixture, block="", area="Family terrace", end="home",
                         holder_name=f"Casey Darrowfen{n}",
                         holder_dob=date(1984, 5, 6))  # fmt: skip

    page = log_in(new_page(), "banofficer")
    page.goto(f"{site}/fixtures/{fixture.pk}/")
    panel = page.locator("[data-league-check]")
    expect(panel.locator("[data-never]")).to_be_visible()
    panel.get_by_role("button", name="Check every holder against the league's bans").click()
    expect(panel.locator("[data-done]")).to_have_text("40 of 40 holders checked", timeout=60_000)
    expect(panel.locator("[data-finished]")).not_to_have_text("under way")
    expect(panel.locator("[data-failures]")).to_have_text("0")
    expect(panel.locator("[data-matched]")).to_contain_text("0")
    expect(panel.locator("[data-started]")).to_contain_text("banofficer")
