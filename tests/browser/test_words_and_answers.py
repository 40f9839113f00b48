"""Issue 38's newcomer, rows 5, 7, 10 and 11 in the browser: under `make run` (DEBUG on) a
mistyped address and /league/ answer plain pages (the second saying how to enrol), the tab has
an icon; the 2016 report bounds its bans by the season; a supporter switches the seat page to
Welsh; a Welsh-speaking safety officer's start page is in Welsh; the away allocation reads with
its thousands separated."""

import pytest
from playwright.sync_api import expect

from safeground.matches.models import Fixture
from safeground.supporters.seats import seat_code
from safeground.venues.models import Block

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def cup_tie() -> Fixture:
    return Fixture.objects.get(away_club__name="Chelsea", stage="Fourth round")


def test_a_newcomer_under_make_run_meets_plain_pages_and_an_icon(site, new_page, log_in, settings):
    settings.DEBUG = True
    page = log_in(new_page(), "safety")
    icon = page.locator("link[rel=icon]")
    assert page.request.get(f"{site}{icon.get_attribute('href')}").ok
    assert page.request.get(f"{site}/favicon.ico").ok  # followed to the icon

    page.goto(f"{site}/league/")
    expect(page.locator("[data-not-enrolled]")).to_contain_text("not enrolled")
    expect(page.locator("[data-how-to-enrol]")).to_contain_text("safeground league-key")

    page.goto(f"{site}/fixtures/{cup_tie().pk}/no-such-tab/")
    expect(page.get_by_role("heading", level=1)).to_have_text("Not found")
    expect(page.locator("body")).not_to_contain_text("URLconf")
    page.get_by_role("link", name="Back to your start page").click()
    expect(page.locator("[data-roles]")).to_be_visible()

    # The 2016 tie's report: bans counted to the season's end, not to the rerun years later.
    page.goto(f"{site}/fixtures/{cup_tie().pk}/report/")
    expect(page.locator("[data-figures]")).to_contain_text("(until the end of the 2016/17 season)")
    page.goto(f"{site}/fixtures/{cup_tie().pk}/")
    expect(page.locator("[data-away-allocation]")).to_have_text("5,000")


def test_a_supporter_switches_the_seat_page_to_welsh(site, new_page):
    block = Block.objects.get(code="E-L1", ground__code="london-stadium")
    phone = new_page({"width": 390, "height": 844})
    phone.goto(f"{site}/s/{seat_code(block, 'A', 1)}/")
    expect(phone.locator("html")).to_have_attribute("lang", "en-gb")
    phone.get_by_role("button", name="Cymraeg").click()
    expect(phone.locator("html")).to_have_attribute("lang", "cy")
    expect(phone.get_by_role("button", name="English")).to_be_visible()
    expect(phone.locator("footer")).not_to_contain_text("In an emergency")


def test_a_welsh_speaking_safety_officers_start_page_is_in_welsh(site, new_page, log_in):
    page = log_in(new_page(), "safety")
    page.locator("[data-language-switch]").get_by_role("button", name="Cymraeg").click()
    page.goto(f"{site}/")
    expect(page.get_by_role("heading", level=1)).to_contain_text("Braf eich gweld")
    expect(page.locator("[data-roles]")).to_contain_text("Swyddog diogelwch")
    expect(page.locator("body")).not_to_contain_text("Coming matches")
