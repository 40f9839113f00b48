"""A person's path through the foundation pages: log in, land, open the plan, be refused."""

import base64
import re
import time

import pytest
from django_otp.oath import TOTP
from playwright.sync_api import expect

from safeground.demo.season import LOGINS, rerun_load
from safeground.matches.models import Fixture
from safeground.venues.models import Block

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
GROUND_STAFF = {"safety", "loggist", "supervisor", "banofficer", "security", "auditor"}


def test_each_demo_role_logs_in_and_lands_on_its_start_page(site, new_page, log_in):
    for login in LOGINS:
        page = log_in(new_page(), login.username)
        expect(page).to_have_url(f"{site}/")
        expect(page.locator("[data-roles]")).to_contain_text(str(login.role.label))
        expect(page.locator("[data-demo-banner]")).to_contain_text(
            "two-factor login is switched off"
        )
        coming_and_earlier = page.locator("[data-earlier] [data-fixture]")
        if login.username == "liaison":
            # The away club's liaison sees the one match shared with it and nothing else.
            expect(coming_and_earlier).to_have_count(1)
            expect(coming_and_earlier.first).to_contain_text("West Ham United v Chelsea")
        else:
            expect(coming_and_earlier).to_have_count(9)
        records = page.locator("[data-records] a")
        if login.username in {"banofficer", "security"}:
            expect(records).to_have_text(["Banned-supporter register", "Flagged tickets to review"])
        elif login.username in {"safety", "liaison"}:  # the liaison: their own club's register
            expect(records).to_have_text(["Banned-supporter register"])
        elif login.username == "auditor":
            expect(records).to_have_text(["Access records"])
        else:
            expect(records).to_have_count(0)
        grounds = page.locator("[data-grounds] a")
        if login.username in GROUND_STAFF:
            expect(grounds).to_have_text(["London Stadium"])
        else:
            expect(grounds).to_have_count(0)
        page.context.close()


def test_wrong_password_is_refused_with_a_message(site, new_page, log_in):
    page = log_in(new_page(), "safety", password="not-the-password")
    expect(page.locator("[data-login-error]")).to_be_visible()
    expect(page).to_have_url(re.compile(r"/login/$"))


def test_steward_opening_the_ground_page_gets_a_refusal_page(site, new_page, log_in):
    page = log_in(new_page(), "steward")
    response = page.goto(f"{site}/grounds/london-stadium/")
    assert response is not None and response.status == 403
    expect(page.locator("h1")).to_have_text("Not allowed")
    expect(page.locator("[data-refusal]")).to_contain_text("Your role does not give you access")


def test_ground_page_draws_every_block_and_shows_a_clicked_block(site, new_page, log_in):
    page = log_in(new_page(), "safety")
    page.get_by_role("link", name=re.compile("London Stadium")).click()
    blocks = page.locator("[data-plan] .block")
    expect(blocks).to_have_count(Block.objects.count())
    expect(page.locator(".plan-note")).to_contain_text("Approximate demo layout")
    away = Block.objects.filter(zone_members__zone__code="away-se").order_by("code").first()
    assert away is not None
    page.locator(f'[data-block="{away.code}"]').click()
    info = page.locator("[data-block-info]")
    expect(info).to_contain_text(f"Block {away.name}")
    expect(info).to_contain_text("Away")
    expect(info).to_contain_text(f"{away.capacity:,}")


def test_fixture_page_shows_the_cup_tie_layout_on_a_phone(site, new_page, log_in):
    page = log_in(new_page({"width": 390, "height": 844}), "police")
    page.get_by_role("link", name="West Ham United v Chelsea").click()
    expect(page.locator("[data-fixture-title]")).to_have_text("West Ham United v Chelsea")
    expect(page.locator("[data-away-allocation]")).to_have_text("5,000")  # thousands separated
    cup_away = page.locator("[data-plan] .block.zone-away")
    expect(cup_away).to_have_count(
        Block.objects.filter(zone_members__zone__code="away-se-cup").count()
    )
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    expect(page.get_by_role("link", name="Open the live log and map")).to_be_visible()


def test_a_steward_gets_no_control_room_link(site, new_page, log_in):
    page = log_in(new_page(), "steward")
    page.get_by_role("link", name="West Ham United v Chelsea").click()
    expect(page.locator("[data-fixture-title]")).to_be_visible()
    expect(page.get_by_role("link", name="Open the live log and map")).to_have_count(0)


def test_safety_officer_sets_up_the_second_factor_and_gets_in(site, new_page, log_in, settings):
    settings.SAFEGROUND_REQUIRE_2FA = True
    page = log_in(new_page(), "safety")
    expect(page).to_have_url(re.compile(r"/account/2fa/"))
    expect(page.locator("[data-demo-banner]")).to_have_count(0)
    secret = page.locator("[data-totp-secret]").inner_text()
    page.get_by_label(re.compile("Six-digit code")).fill("000000")
    page.get_by_role("button", name="Confirm").click()
    expect(page.locator(".errorlist")).to_contain_text("not right")
    time.sleep(1.1)  # django-otp's back-off after a wrong code
    token = TOTP(base64.b32decode(secret)).token()
    page.get_by_label(re.compile("Six-digit code")).fill(f"{token:06d}")
    page.get_by_role("button", name="Confirm").click()
    expect(page).to_have_url(f"{site}/")
    expect(page.locator("[data-grounds] a")).to_have_count(1)


def test_the_capacity_page_starts_with_the_figures_and_folds_the_working(site, new_page, log_in):
    """Found by a newcomer: 17,000 px of working with no summary, numbers without separators
    and "660/h per hour"."""
    from safeground.venues.capacity import stand_capacities
    from safeground.venues.models import Ground

    stands = stand_capacities(Ground.objects.get(code="london-stadium"))
    whole = sum(capacity.safe for _, capacity in stands)
    assert whole >= 1000  # so the separator is there to see
    page = log_in(new_page({"width": 390, "height": 844}), "safety")
    page.goto(f"{site}/grounds/london-stadium/")
    page.get_by_role("link", name=re.compile("Safe capacity")).click()
    expect(page.locator("[data-ground-safe]")).to_have_text(f"{whole:,}")
    rows = page.locator("[data-capacity-summary] tbody tr")
    expect(rows).to_have_count(len(stands))
    stand, capacity = stands[0]
    row = page.locator(f'[data-capacity-summary] [data-stand="{stand.code}"]')
    expect(row).to_contain_text(f"{capacity.safe:,}")
    expect(row).to_contain_text(capacity.limited_by)
    # The summary is on the first screen; the working is folded until asked for.
    assert page.locator("[data-capacity-summary]").bounding_box()["y"] < 844
    working = page.locator(f'[data-capacity-of="{stand.code}"]').first
    expect(working.locator("dl")).to_be_hidden()
    working.locator("summary").click()
    expect(working.locator("dl")).to_be_visible()
    expect(working).to_contain_text("× 1 h")
    expect(page.locator("body")).not_to_contain_text("per hour =")


def test_the_fixture_page_links_the_briefing_and_board_and_no_report_before_kick_off(
    site, new_page, log_in
):
    """Issue 27: the briefing and the deployment board were reached only through the control
    room's Posts tab, and an unplayed fixture offered a post-match report."""
    played = Fixture.objects.get(away_club__name="Chelsea", stage="Fourth round")
    today = rerun_load()  # the cup tie again, kicking off a few hours from now
    page = log_in(new_page(), "safety")
    page.goto(f"{site}/fixtures/{today.pk}/")
    expect(page.locator("[data-report-link]")).to_have_count(0)
    expect(page.locator("[data-report-later]")).to_have_text("Post-match report: after the match")
    page.get_by_role("link", name="Match-day briefing").click()
    expect(page).to_have_url(f"{site}/fixtures/{today.pk}/briefing/")
    page.go_back()
    page.locator("[data-deployment-link]").click()
    expect(page).to_have_url(f"{site}/fixtures/{today.pk}/deployment/")
    page.goto(f"{site}/fixtures/{played.pk}/")
    expect(page.locator("[data-report-later]")).to_have_count(0)
    page.locator("[data-report-link]").click()
    expect(page).to_have_url(f"{site}/fixtures/{played.pk}/report/")
    # Those who may read neither see no link to them: the away club's liaison.
    liaison = log_in(new_page(), "liaison")
    liaison.goto(f"{site}/fixtures/{played.pk}/")
    expect(liaison.locator("[data-briefing-link], [data-deployment-link]")).to_have_count(0)


def test_the_start_page_names_the_rerun_apart_from_the_2016_cup_tie(site, new_page, log_in):
    """Issue 27: both were listed as "West Ham United v Chelsea"."""
    played = Fixture.objects.get(away_club__name="Chelsea", stage="Fourth round")
    today = rerun_load()
    page = log_in(new_page(), "loggist")
    names = page.locator("[data-fixture] a").all_inner_texts()
    chelsea = sorted(name for name in names if "Chelsea" in name)
    assert chelsea == [
        "West Ham United v Chelsea, Fourth round",
        "West Ham United v Chelsea, Fourth round (demo rerun, today)",
    ]
    page.get_by_role("link", name="rerun").click()
    expect(page).to_have_url(f"{site}/fixtures/{today.pk}/")
    page.go_back()
    page.get_by_role("link", name="West Ham United v Chelsea, Fourth round", exact=True).click()
    expect(page).to_have_url(f"{site}/fixtures/{played.pk}/")
