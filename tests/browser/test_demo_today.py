"""A newcomer after `make run`: the demo has the cup tie again a few hours from now, so a scanner
pairs with it, scans a ticket, and the control room's gates panel counts it, nothing edited."""

import re

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from safeground.entry.runtime import lookups
from safeground.matches.models import Fixture
from tests.browser.test_scanner import expect_decision, open_control_room, scan, scanner_key

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_scanner_pairs_with_the_demo_match_that_kicks_off_today(site, new_page, log_in) -> None:
    call_command("demo", if_empty=True)  # what `make run` calls: adds today's rerun
    lookups.caches_clear()
    rerun = Fixture.objects.get(stage__contains="rerun")
    room = open_control_room(log_in(new_page(), "loggist"), site, rerun)

    page = new_page({"width": 390, "height": 844})
    page.goto(f"{site}/entry/scanner/")
    page.get_by_label("Device key").fill(scanner_key("Gate C handheld"))
    page.get_by_label("Turnstile").fill("C01")
    page.get_by_role("button", name="Pair and load the ticket list").click()
    expect(page.locator("[data-bundle-status]")).to_have_text(
        re.compile(r"^Bundle for West Ham United v Chelsea, valid until \d\d:\d\d, \d+ tickets$")
    )
    scan(page, "RERUN-000001")
    expect_decision(page, "ADMIT", "", "Admit: block E-L1, row A, seat 1.")
    expect(room.locator("[data-entry-counts] [data-admitted]")).to_have_text("1")
