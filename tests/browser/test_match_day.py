"""The same two clubs meet twice in the demo (the 2016 cup tie, and its rerun today): every page
of a match says which by its day, in its heading and its tab's title, and the match's page links
to the decision log, the supporters' reports and the seat codes (issue 38)."""

import pytest
from django.urls import reverse
from django.utils import timezone
from playwright.sync_api import Page, expect

from safeground.accounts.models import Organisation, User
from safeground.accounts.services import device_create
from safeground.clock import local_date
from safeground.demo.season import rerun_load
from safeground.entry.runtime import lookups
from safeground.incidents.posts import steward_post_assign
from safeground.matches.models import Fixture

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_two_meetings_of_the_same_clubs_are_told_apart_by_their_day(site, new_page, log_in):
    cup = Fixture.objects.get(away_club__name="Chelsea", stage="Fourth round")
    rerun = rerun_load()
    rerun.kickoff = timezone.now()
    rerun.save(update_fields=["kickoff"])
    page = log_in(new_page(), "safety")
    for fixture, day in ((cup, local_date(cup.kickoff)), (rerun, "today")):
        page.goto(f"{site}/fixtures/{fixture.pk}/")
        expect(page.get_by_role("heading", level=1)).to_have_text(
            f"West Ham United v Chelsea ({day})"
        )
        expect(page).to_have_title(f"West Ham v Chelsea ({day}) · Safeground")
        page.goto(f"{site}/fixtures/{fixture.pk}/control/")
        expect(page.get_by_role("heading", level=1)).to_have_text(
            f"West Ham v Chelsea ({day}) · live log"
        )
        expect(page).to_have_title(f"Control room · West Ham v Chelsea ({day}) · Safeground")

    # The steward's phone and the scanner at the turnstile, today.
    steward, loggist = User.objects.get(username="steward"), User.objects.get(username="loggist")
    steward_post_assign(fixture=rerun, steward=steward, assigned_by=loggist, zone="away-se-cup")
    phone = log_in(new_page({"width": 390, "height": 844}), "steward")
    phone.goto(f"{site}/fixtures/{rerun.pk}/steward/")
    expect(phone.get_by_role("heading", level=1)).to_have_text("West Ham v Chelsea (today)")
    expect(phone).to_have_title("Steward · West Ham v Chelsea (today) · Safeground")
    scanner = _paired_scanner(new_page({"width": 390, "height": 844}), site)
    expect(scanner.get_by_role("heading", level=1)).to_have_text(
        "Scanner · West Ham United v Chelsea (today)"
    )
    expect(scanner).to_have_title("Scanner · West Ham United v Chelsea (today) · Safeground")


def test_the_match_page_links_the_decision_log_supporters_reports_and_seat_codes(
    site, new_page, log_in
):
    rerun = rerun_load()
    page = log_in(new_page(), "safety")
    page.goto(f"{site}/fixtures/{rerun.pk}/")
    page.get_by_role("link", name="Decision log").click()
    expect(page.get_by_role("heading", level=1)).to_contain_text(
        "Decision log · West Ham v Chelsea"
    )

    page.go_back()
    page.get_by_role("link", name="Supporters' reports (in the control room)").click()
    expect(page).to_have_url(f"{site}/fixtures/{rerun.pk}/control/")

    page.go_back()
    page.get_by_text("Seat codes to print, one block at a time (PDF)").click()
    seat_codes = page.locator("[data-seat-codes] a")
    expect(seat_codes).to_have_count(rerun.ground.blocks.filter(seats_per_row__gt=0).count())
    expect(page.get_by_role("link", name="S-L2", exact=True)).to_have_attribute(
        "href", reverse("supporters_seat_sheet", args=[rerun.ground.code, "S-L2"])
    )

    # A steward sees none of the three.
    phone = log_in(new_page(), "steward")
    phone.goto(f"{site}/fixtures/{rerun.pk}/")
    for name in ("Decision log", "Supporters' reports (in the control room)"):
        expect(phone.get_by_role("link", name=name)).to_have_count(0)
    expect(phone.locator("[data-seat-codes]")).to_have_count(0)


def _paired_scanner(page: Page, site: str) -> Page:
    lookups.caches_clear()  # the server runs in this process: it sees the new kick-off at once
    club = Organisation.objects.get(name="West Ham United")
    key = device_create(organisation=club, name="Turnstile F03", profile="scanner")[1]
    page.goto(f"{site}/entry/scanner/")
    page.get_by_label("Device key").fill(key)
    page.get_by_label("Turnstile").fill("F03")
    page.get_by_role("button", name="Pair and load the ticket list").click()
    expect(page.locator("[data-scanner]")).to_have_attribute("data-state", "ready")
    return page
