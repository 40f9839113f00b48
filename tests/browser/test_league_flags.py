"""A league match in the ban officer's flags (safeground.exchange): another club's ban, shown with
the issuing club and its contact, never that club's evidence; reviewed and confirmed as any
flag, with the same access records."""

import re

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from safeground.accounts.models import Organisation
from safeground.bans.models import AccessRecord, LeagueBan
from safeground.entry.models import Ticket, TicketFlag

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_ban_officer_sees_a_league_match_with_its_issuing_club(site, new_page, log_in):
    club = Organisation.objects.get(name="West Ham United")
    ticket = (
        Ticket.objects.filter(fixture__ground__organisation=club, status="valid", end="away")
        .order_by("pk")
        .first()
    )
    assert ticket is not None
    league_ban = LeagueBan.objects.create(
        organisation=club, reference="cd" * 16, kind="club_ban", is_life=True,
        issuing_club="Northbank Rovers", contact="security@northbank.example, 0100 000 0002",
        first_matched_at=timezone.now(),
    )  # fmt: skip
    TicketFlag.objects.create(
        ticket=ticket, league_ban=league_ban, score=100.0, flagged_at=timezone.now(),
        reasons=["the same name and date of birth as a ban another club published"],
    )  # fmt: skip

    page = log_in(new_page(), "banofficer")
    page.goto(f"{site}/register/")
    page.locator("[data-open-flags]").click()
    page.get_by_label("Why do you need this record?").fill("Flag review before the cup tie")
    page.get_by_role("button", name="Show the record").click()
    row = page.locator("[data-flag]", has_text=ticket.barcode)
    expect(row.locator("[data-league]")).to_have_text("League ban of Northbank Rovers")
    row.get_by_role("link", name=f"Review {ticket.barcode}").click()
    page.get_by_label("Why do you need this record?").fill("League match before the cup tie")
    page.get_by_role("button", name="Show the record").click()
    expect(page.locator("[data-issuing-club]")).to_have_text("Northbank Rovers")
    expect(page.locator("[data-issuing-contact]")).to_contain_text("security@northbank.example")
    expect(page.locator("[data-league-ban]")).to_contain_text("for life")
    expect(page.locator("[data-banned]")).to_have_count(0)  # no register record of ours
    page.get_by_label("Your note").fill("Same person: Northbank Rovers' officer confirmed by phone")
    page.get_by_role("button", name=re.compile("^Confirm")).click()
    expect(page.locator(".message")).to_contain_text("confirmed")
    ticket.refresh_from_db()
    assert ticket.status == Ticket.Status.CANCELLED
    assert AccessRecord.objects.filter(
        action="review_flag", username="banofficer", reason="League match before the cup tie",
        detail__contains="league ban of Northbank Rovers",
    ).exists()  # fmt: skip


def test_the_safety_officer_opens_the_exchanges_record_from_the_register(
    site, settings, new_page, log_in
):
    from safeground import signing
    from safeground.exchange import services

    # This test's server plays the league's exchange too, with this club enrolled.
    settings.SAFEGROUND_ROLE = "exchange"
    settings.SAFEGROUND_EXCHANGE_URL = site
    club = services.club_enrol(
        name="Riverside Athletic", contact="security@riverside.example",
        public_key=signing.public_key_json()["public_key"],
    )  # fmt: skip
    check = services.check_begin(club=club, fixture="fixture 41", holders=120, tickets=130,
                                 coming=400)  # fmt: skip
    services.check_outcome(club=club, check=check, matched=2)

    page = log_in(new_page(), "safety")
    page.goto(f"{site}/register/")
    page.get_by_role("link", name="League ban exchange").click()
    checks = page.locator("[data-checks]")
    expect(checks).to_contain_text("fixture 41")
    expect(checks.get_by_role("cell", name="120", exact=True)).to_be_visible()
    expect(page.locator("[data-unreachable]")).to_have_count(0)
