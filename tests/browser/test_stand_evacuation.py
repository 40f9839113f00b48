"""Closing a stand and evacuating it (issue 41): the safety officer opens the West Stand from the
control room's Stands panel, sees its exits and evacuation time, closes it with a reason; the
stewards of its blocks get the broadcast and one acknowledges it on the phone (the count rises),
and the count still inside falls as the turnstiles scan people out. Then in Welsh, on a phone."""

import re
from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import Browser, Page, expect

from safeground.accounts.models import User
from safeground.decisions.models import StandClosure
from safeground.demo.season import DEMO_PASSWORD
from safeground.incidents.posts import steward_post_assign
from safeground.matches.models import Fixture
from safeground.venues.models import Stand
from tests import factories
from tests.browser.turnstiles import turnstile_scanner

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE = {"width": 390, "height": 844}
WAIT_MS = 15_000  # the page's live part is fetched every 3 s


def cup_tie() -> Fixture:
    cup = Fixture.objects.get(away_club__name="Chelsea")
    cup.kickoff = timezone.now() + timedelta(hours=1)  # the gates are open now
    cup.save(update_fields=["kickoff"])
    return cup


def post(fixture: Fixture, username: str, **place: str) -> None:
    steward_post_assign(
        fixture=fixture,
        steward=User.objects.get(username=username),
        assigned_by=User.objects.get(username="loggist"),
        **place,
    )


def turnstiles(site: str):  # type: ignore[no-untyped-def]
    """The West Stand's gates: each scan admitted, in or out."""
    scan = turnstile_scanner(site, "Gate I turnstiles")

    def admitted(barcode: str, turnstile: str, direction: str) -> None:
        assert scan(barcode, turnstile, direction)["decision"] == "admit"

    return admitted


def test_a_stand_closed_its_stewards_told_and_the_crowd_counted_out(site, new_page, log_in):
    cup = cup_tie()
    post(cup, "steward", zone="home-west")
    post(cup, "supervisor", gate="I")
    for n in range(3):
        factories.ticket(cup, block="W-L4", barcode=f"WEST-{n}")
    scan = turnstiles(site)
    for n in range(3):
        scan(f"WEST-{n}", "I01", "in")

    # The safety officer finds the West Stand in the control room's Stands panel.
    safety = log_in(new_page(), "safety")
    safety.goto(f"{site}/fixtures/{cup.pk}/control/")
    expect(safety.locator("[data-freshness]")).to_contain_text("connected")
    safety.get_by_role("tab", name="Posts").click()
    stands = safety.locator("[data-stands-panel]")
    stands.locator('[data-stand="W"]').get_by_role("link", name="Close stand / evacuate").click()

    # Before confirming: its exits, its evacuation time, its blocks' stewards, who is inside.
    expect(safety.get_by_role("heading", name="Close and evacuate West Stand")).to_be_visible()
    exits = safety.locator("[data-exits]")
    expect(exits).to_contain_text("West Lower 4 vomitory")
    expect(exits).to_contain_text("West Upper 10 vomitory")
    expect(safety.locator("[data-evacuation-time]")).to_contain_text("6 minutes")
    stewards = safety.locator("[data-stand-stewards]")
    expect(stewards).to_contain_text("Kim Ashby")
    expect(stewards).to_contain_text("Tom Reeve")
    expect(safety.locator("[data-still-inside]")).to_have_text("3")
    # Gate H serves the South Stand too: counted whole, and named as such.
    expect(safety.locator("[data-inside-how]")).to_contain_text("Gate H")

    # The steward's phone is open when the order comes.
    phone = log_in(new_page(PHONE), "steward")
    phone.goto(f"{site}/fixtures/{cup.pk}/steward/")
    expect(phone.locator("[data-freshness]")).to_contain_text("connected")

    safety.get_by_label("Why (logged with the decision)").fill("Smoke from the W-L4 concourse")
    safety.get_by_role("button", name="Confirm: close and evacuate").click()
    expect(safety.locator("[data-stand-closed]")).to_contain_text("West Stand closed at")
    expect(safety.locator("[data-ack-count]")).to_have_text("0 of 2")
    expect(safety.locator("[data-ack-waiting]")).to_contain_text("Kim Ashby")

    dialog = phone.locator("[data-broadcast]")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("Evacuate West Stand now")
    phone.get_by_role("button", name="Acknowledge").click()
    expect(dialog).to_be_hidden()
    expect(safety.locator("[data-ack-count]")).to_have_text("1 of 2", timeout=WAIT_MS)
    expect(safety.locator("[data-ack-waiting]")).to_have_text("Not yet: Tom Reeve")

    # People leave: the turnstiles scan them out, and the count still inside falls.
    scan("WEST-0", "I02", "out")
    scan("WEST-1", "I01", "out")
    expect(safety.locator("[data-still-inside]")).to_have_text("1", timeout=WAIT_MS)
    scan("WEST-2", "I03", "out")
    expect(safety.locator("[data-still-inside]")).to_have_text("0", timeout=WAIT_MS)

    # The closure is the commander's decision in the log; the control room is warned of it.
    closure = StandClosure.objects.get()
    assert closure.decision.decision == "Close West Stand and evacuate it"
    assert closure.decision.rationale == "Smoke from the W-L4 concourse"
    room = log_in(new_page(), "loggist")
    room.goto(f"{site}/fixtures/{cup.pk}/control/")
    expect(room.locator('[data-stand-alarm="W"]')).to_contain_text("West Stand closed at")

    # All clear: reopened, logged too, and the alarm goes.
    safety.get_by_label("Why (logged with the decision)").fill("Fire service: all clear")
    safety.get_by_role("button", name="Reopen the stand (all clear)").click()
    expect(safety.locator("[data-stand-reopened]")).to_contain_text("All clear: West Stand")
    expect(room.locator('[data-stand-alarm="W"]')).to_have_count(0, timeout=WAIT_MS)
    assert StandClosure.objects.order_by("pk").last().closed is False


def test_the_evacuation_page_in_welsh_on_a_phone(site, browser: Browser):
    cup = cup_tie()
    post(cup, "steward", zone="home-west")
    west = Stand.objects.get(ground=cup.ground, code="W")
    context = browser.new_context(viewport=PHONE, locale="cy")
    try:
        page: Page = context.new_page()
        page.set_default_timeout(10_000)
        page.goto(f"{site}/login/")
        page.get_by_label("Enw defnyddiwr").fill("safety")
        page.get_by_label("Cyfrinair").fill(DEMO_PASSWORD)
        page.get_by_role("button", name="Mewngofnodi").click()
        expect(page.locator("[data-user]")).to_be_visible()
        page.goto(f"{site}/fixtures/{cup.pk}/stands/{west.pk}/evacuation/")
        expect(
            page.get_by_role("heading", name="Cau a gwacáu Eisteddle'r Gorllewin")
        ).to_be_visible()
        expect(page.locator("[data-exits] h2")).to_have_text(
            "Allanfeydd sy'n gwasanaethu'r eisteddle"
        )
        expect(page.locator("[data-evacuation-time]")).to_contain_text("6 munud")
        page.get_by_label("Pam (wedi'i gofnodi gyda'r penderfyniad)").fill("Mwg yn y cyntedd")
        page.get_by_role("button", name="Cadarnhau: cau a gwacáu").click()
        expect(page.locator("[data-stand-closed]")).to_contain_text("gwacáu ar y gweill")
        expect(page.locator("[data-acks]")).to_contain_text(re.compile(r"0 o 1 stiward"))
        # Usable at 390 px: nothing wider than the screen.
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    finally:
        context.close()
