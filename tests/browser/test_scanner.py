"""The scanner page at a turnstile: paired with a device key, it shows the server's decision for
every reason code; with no network it decides from its signed bundle and queues the scans; two
scanners admitting the same ticket offline raise a conflict the control room sees live; a revoked
key stops it (docs/adr/0006-offline-scanners.md)."""

import re
from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import Page, expect

from safeground.accounts.models import Device, Organisation
from safeground.accounts.services import device_create, device_revoke
from safeground.entry import rules
from safeground.entry.models import EntryConflict, Scan, Ticket, TicketFlag
from safeground.entry.runtime import lookups
from safeground.matches.models import Fixture
from tests.entry.conftest import flag, make_ticket

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE = {"width": 390, "height": 844}
DENY = "DO NOT ADMIT"


@pytest.fixture
def match_today(site) -> Fixture:
    """The cup tie kicks off in an hour (scanners work now), with a ticket for each decision."""
    cup = Fixture.objects.get(away_club__name="Chelsea")
    cup.kickoff = timezone.now() + timedelta(hours=1)
    cup.save(update_fields=["kickoff"])
    make_ticket(cup, "AWAY-1", "S-L2", "away")
    make_ticket(cup, "AWAY-2", "S-L3", "away")
    make_ticket(cup, "HOME-1", "N-L1", "home")
    make_ticket(cup, "CANCELLED-1", "S-L2", "away", status=Ticket.Status.CANCELLED)
    flag(make_ticket(cup, "FLAGGED-1", "S-L2", "away"), TicketFlag.Status.OPEN)
    banned = make_ticket(cup, "BANNED-1", "S-L2", "away", status=Ticket.Status.CANCELLED)
    flag(banned, TicketFlag.Status.CONFIRMED)
    league = Fixture.objects.get(away_club__name="Middlesbrough")
    make_ticket(league, "LEAGUE-1", "S-L2", "away")
    lookups.caches_clear()  # the server runs in this process: it sees the new kick-off at once
    yield cup
    lookups.caches_clear()


def scanner_key(name: str) -> str:
    club = Organisation.objects.get(name="West Ham United")
    return device_create(organisation=club, name=name, profile="scanner")[1]


def pair(page: Page, site: str, key: str, turnstile: str) -> Page:
    page.goto(f"{site}/entry/scanner/")
    page.get_by_label("Device key").fill(key)
    page.get_by_label("Turnstile").fill(turnstile)
    page.get_by_role("button", name="Pair and load the ticket list").click()
    expect(page.locator("[data-bundle-status]")).to_have_text(
        re.compile(r"^Bundle for West Ham United v Chelsea, valid until \d\d:\d\d, \d+ tickets$")
    )
    expect(page.locator("[data-scanner]")).to_have_attribute("data-state", "ready")
    return page


def open_control_room(room: Page, site: str, match: Fixture) -> Page:
    """The match's control room, live, its gates panel showing no one in yet."""
    room.goto(f"{site}/fixtures/{match.pk}/control/")
    expect(room.locator("[data-freshness]")).to_contain_text("connected")
    room.get_by_role("tab", name="Gates").click()
    expect(room.locator("[data-entry-counts] [data-admitted]")).to_have_text("0")
    return room


def scan(page: Page, barcode: str) -> None:
    page.get_by_label("Barcode").fill(barcode)
    page.get_by_label("Barcode").press("Enter")


def expect_decision(page: Page, word: str, reason: str, words: str = "") -> None:
    """The decision's word, its reason (the code in data-reason; the steward reads its name,
    never the code) and its message."""
    box = page.locator("[data-decision]")
    expect(box).to_have_attribute("data-reason", reason)
    expect(box.locator("[data-decision-reason]")).to_have_text(
        rules.label(reason) if reason else ""
    )
    expect(box.locator("[data-decision-word]")).to_have_text(word)
    colour = "admit" if word in ("ADMIT", "EXIT") else "deny"  # an exit turns the turnstile too
    expect(box).to_have_class(f"decision decision-{colour}")
    if words:
        expect(box.locator("[data-decision-message]")).to_contain_text(words)


def test_every_reason_code_as_the_steward_sees_it_online(match_today, site, new_page) -> None:
    page = pair(new_page(PHONE), site, scanner_key("Handheld 1"), "F03")
    expect(page.locator("[data-network]")).to_have_text("online")
    for barcode, word, reason, words in [
        ("AWAY-1", "ADMIT", "", "Admit: block S-L2, row C, seat 12."),
        ("AWAY-1", DENY, "already_inside", "already used at Gate F (away)"),
        ("BANNED-1", DENY, "banned", "banned from this match"),
        ("HOME-1", DENY, "wrong_end", "Direct the holder to Gate A"),
        ("LEAGUE-1", DENY, "wrong_match", "another match"),
        ("CANCELLED-1", DENY, "cancelled", "cancelled"),
        ("NOT-A-TICKET", DENY, "unknown_ticket", "not on this match's list"),
        ("FLAGGED-1", DENY, "flagged", "check identity"),
    ]:
        scan(page, barcode)
        expect_decision(page, word, reason, words)
        expect(page.locator("[data-decision-mode]")).to_have_text("")  # decided by the server
    assert Scan.objects.filter(offline=False).count() == 8
    assert not Scan.objects.filter(offline=True).exists()


def test_two_scanners_offline_admit_one_ticket_and_the_control_room_sees_the_conflict(
    match_today, site, new_page, log_in
) -> None:
    room = open_control_room(log_in(new_page(), "safety"), site, match_today)
    panel = room.locator("[data-entry-counts]")
    expect(panel.locator("[data-conflicts]")).to_have_text("None.")

    first = pair(new_page(PHONE), site, scanner_key("Handheld 1"), "F03")
    second = pair(new_page(PHONE), site, scanner_key("Handheld 2"), "F07")
    for page in (first, second):
        expect(page.locator("[data-scanner]")).to_have_attribute("data-offline-ready", "true")
        page.context.set_offline(True)
        expect(page.locator("[data-network]")).to_have_text("OFFLINE")

    scan(first, "AWAY-1")
    expect_decision(first, "ADMIT", "", "Admit: block S-L2, row C, seat 12.")
    expect(first.locator("[data-decision-mode]")).to_have_text("OFFLINE · queued (1)")
    # Still offline, the page opens again (service worker) with its bundle and its queue...
    first.reload()
    expect(first.locator("[data-bundle-status]")).to_contain_text("Bundle for West Ham United")
    expect(first.locator("[data-queued]")).to_have_text("queued (1)")
    # ...and knows it let that ticket in itself.
    scan(first, "AWAY-1")
    expect_decision(first, DENY, "already_inside", "already used by this scanner")
    scan(first, "LEAGUE-1")
    expect_decision(first, DENY, "unknown_ticket", "not on this match's list")
    expect(first.locator("[data-queued]")).to_have_text("queued (3)")

    scan(second, "AWAY-1")  # a copy of the ticket, at another turnstile, a moment later
    expect_decision(second, "ADMIT", "", "Admit: block S-L2")
    expect(second.locator("[data-decision-mode]")).to_have_text("OFFLINE · queued (1)")
    assert not Scan.objects.exists()

    # The later scan reaches the server first; the earlier one still stands.
    second.context.set_offline(False)
    expect(second.locator("[data-queued]")).to_have_text("queued (0)", timeout=15_000)
    first.context.set_offline(False)
    expect(first.locator("[data-queued]")).to_have_text("queued (0)", timeout=15_000)
    expect(first.locator("[data-conflicts] li")).to_have_count(1)
    expect(first.locator("[data-conflicts] li")).to_contain_text("AWAY-1: ticket used twice")
    expect(second.locator("[data-conflicts] li")).to_have_count(0)

    conflicts = panel.locator("[data-conflicts] li")
    expect(conflicts).to_have_count(1)
    expect(conflicts).to_contain_text("Ticket for S-L2, row C, seat 12")
    expect(conflicts).to_contain_text("turnstile F03 (offline)")
    expect(conflicts.locator("div").first).to_contain_text("first:")
    expect(conflicts.locator("div").first).to_contain_text("turnstile F03")
    expect(conflicts.locator("div").last).to_contain_text("turnstile F07 (offline)")
    expect(panel.locator("[data-admitted]")).to_have_text("1")
    expect(panel.locator("[data-conflict-count]")).to_have_text("(1)")

    conflict = EntryConflict.objects.get()
    assert (conflict.first_scan.turnstile.code, conflict.second_scan.turnstile.code) == (
        "F03",
        "F07",
    )
    ticket = Ticket.objects.get(barcode="AWAY-1")
    assert ticket.inside and ticket.entered_at == conflict.first_scan.scanned_at
    assert Scan.objects.filter(offline=True).count() == 4

    # A reload of the control room shows it too, from the counts.
    room.reload()
    room.get_by_role("tab", name="Gates").click()
    expect(room.locator("[data-conflicts] li")).to_have_count(1)


def test_a_holder_banned_after_the_bundle_and_admitted_offline_is_shown_to_the_control_room(
    match_today, site, new_page, log_in
) -> None:
    panel = open_control_room(log_in(new_page(), "safety"), site, match_today).locator(
        "[data-entry-counts]"
    )
    expect(panel.get_by_text("Banned holder admitted offline")).to_have_count(0)

    page = pair(new_page(PHONE), site, scanner_key("Handheld 1"), "F03")
    expect(page.locator("[data-scanner]")).to_have_attribute("data-offline-ready", "true")
    page.context.set_offline(True)
    scan(page, "AWAY-1")
    expect_decision(page, "ADMIT", "", "Admit: block S-L2, row C, seat 12.")
    # Meanwhile the ban officer confirms that the holder is banned: the bundle does not know.
    flag(Ticket.objects.get(barcode="AWAY-1"), TicketFlag.Status.CONFIRMED)

    page.context.set_offline(False)
    expect(page.locator("[data-queued]")).to_have_text("queued (0)", timeout=15_000)
    alerts = panel.locator("[data-banned-admitted] li")
    expect(alerts).to_have_count(1)  # live, no reload
    expect(panel.get_by_role("heading", name="Banned holder admitted offline")).to_be_visible()
    expect(alerts).to_have_text(
        re.compile(r"^\d\d:\d\d:\d\d Gate F \(away\), turnstile F03 \(offline\)"
                   r" — ticket for S-L2, row C, seat 12 \(flag\)$")
    )  # fmt: skip
    expect(alerts.get_by_role("link", name="(flag)")).to_have_count(1)
    expect(panel.locator("[data-banned-denials]")).to_have_text("None yet.")


def test_a_steward_scans_people_out_and_back_in_online_and_offline(
    match_today, site, new_page
) -> None:
    Fixture.objects.filter(pk=match_today.pk).update(reentry=True)
    Ticket.objects.filter(barcode="AWAY-2").update(inside=True)  # in before the bundle was made
    lookups.caches_clear()
    page = pair(new_page(PHONE), site, scanner_key("Handheld 1"), "F03")
    expect(page.locator("[data-no-exits]")).to_be_hidden()
    scan(page, "AWAY-1")
    expect_decision(page, "ADMIT", "", "Admit: block S-L2")

    # From the keyboard: to the In / Out choice, an arrow key to Out, and back to the barcode.
    page.get_by_label("In", exact=True).focus()
    page.keyboard.press("ArrowRight")
    expect(page.get_by_label("Out", exact=True)).to_be_checked()
    expect(page.get_by_label("Barcode")).to_be_focused()
    scan(page, "AWAY-1")
    expect_decision(page, "EXIT", "", "Exit recorded. The ticket may be used to come back in.")
    assert not Ticket.objects.get(barcode="AWAY-1").inside
    assert Scan.objects.filter(direction="out", offline=False).count() == 1

    expect(page.locator("[data-scanner]")).to_have_attribute("data-offline-ready", "true")
    page.context.set_offline(True)
    scan(page, "AWAY-2")  # inside when the bundle was made: may go out
    expect_decision(page, "EXIT", "", "Exit recorded. The ticket may be used to come back in.")
    expect(page.locator("[data-decision-mode]")).to_have_text("OFFLINE · queued (1)")
    scan(page, "NOT-A-TICKET")
    expect_decision(page, DENY, "unknown_ticket", "not on this match's list")
    page.get_by_label("In", exact=True).check()
    for barcode in ("AWAY-2", "AWAY-1"):  # both went out: both may come back in
        scan(page, barcode)
        expect_decision(page, "ADMIT", "", "Admit: block S-L")
    scan(page, "AWAY-2")
    expect_decision(page, DENY, "already_inside", "already used by this scanner")
    # The page opens again offline and still knows who went out and came back.
    page.reload()
    expect(page.locator("[data-queued]")).to_have_text("queued (5)")
    scan(page, "AWAY-1")
    expect_decision(page, DENY, "already_inside")

    page.context.set_offline(False)
    expect(page.locator("[data-queued]")).to_have_text("queued (0)", timeout=15_000)
    assert list(
        Scan.objects.filter(offline=True)
        .order_by("scanned_at")
        .values_list("ticket__barcode", "direction", "decision")
    ) == [
        ("AWAY-2", "out", "admit"),
        (None, "out", "deny"),
        ("AWAY-2", "in", "admit"),
        ("AWAY-1", "in", "admit"),
        ("AWAY-2", "in", "deny"),
        ("AWAY-1", "in", "deny"),
    ]
    assert Ticket.objects.filter(barcode__in=["AWAY-1", "AWAY-2"], inside=True).count() == 2
    assert not EntryConflict.objects.exists()


def test_with_no_reentry_the_scanner_says_exits_are_not_allowed(match_today, site, new_page):
    page = pair(new_page(PHONE), site, scanner_key("Handheld 1"), "F03")
    expect(page.locator("[data-no-exits]")).to_have_text(
        re.compile(r"^Exits are not allowed for this match \(no re-entry\)")
    )
    expect(page.get_by_label("Out", exact=True)).to_be_disabled()
    expect(page.get_by_label("In", exact=True)).to_be_checked()
    scan(page, "AWAY-1")
    expect_decision(page, "ADMIT", "", "Admit: block S-L2")
    assert Scan.objects.get().direction == "in"


def test_an_expired_bundle_refuses_offline_decisions(match_today, site, new_page, settings):
    settings.SAFEGROUND_BUNDLE_HOURS = 2 / 3600  # bundles valid for two seconds
    page = pair(new_page(PHONE), site, scanner_key("Handheld 1"), "F03")
    page.context.set_offline(True)
    expect(page.locator("[data-bundle-status]")).to_contain_text(
        "The ticket list for West Ham United v Chelsea expired at", timeout=10_000
    )
    scan(page, "AWAY-1")
    box = page.locator("[data-decision]")
    expect(box.locator("[data-decision-word]")).to_have_text("CANNOT CHECK")
    expect(box.locator("[data-decision-message]")).to_contain_text("The ticket list expired at")
    expect(box.locator("[data-decision-message]")).to_contain_text("reconnect to the network")
    expect(page.locator("[data-queued]")).to_have_text("queued (0)")


def test_a_revoked_key_is_shown_as_revoked(match_today, site, new_page) -> None:
    key = scanner_key("Handheld 1")
    page = pair(new_page(PHONE), site, key, "F03")
    device_revoke(device=Device.objects.get(name="Handheld 1"))
    lookups.caches_clear()  # i.e. SAFEGROUND_ENTRY_CACHE_SECONDS later
    scan(page, "AWAY-1")
    revoked = page.locator("[data-revoked]")
    expect(revoked).to_be_visible()
    expect(revoked).to_contain_text("This scanner's key has been revoked")
    expect(page.get_by_label("Barcode")).to_be_hidden()
    page.reload()
    expect(revoked).to_be_visible()
    assert not Scan.objects.exists()


def test_the_camera_button_scans_through_the_camera_module(match_today, site, browser) -> None:
    url = "/static/safeground/scanner-camera-1.js"
    # The camera module reading one ticket (the module itself is tested on fake camera footage
    # in test_scanner_camera.py): the page turns what it reads into a scan.
    stub = (
        "export function startCamera(video, onBarcode, options) {"
        " window.zxingGiven = options.zxing; setTimeout(() => onBarcode('AWAY-1'), 50);"
        " return () => { window.cameraStopped = true; }; }"
    )
    context = browser.new_context(viewport=PHONE, service_workers="block")
    try:
        page = context.new_page()
        page.route(
            f"**{url}", lambda route: route.fulfill(body=stub, content_type="text/javascript")
        )
        pair(page, site, scanner_key("Handheld 1"), "F03")
        page.get_by_role("button", name="Camera").click()
        expect_decision(page, "ADMIT", "", "Admit: block S-L2")
        page.get_by_role("button", name="Stop camera").click()
        assert page.evaluate("window.cameraStopped") is True
        # The page names the reader's file ({% static %}), as its service worker keeps it.
        assert page.evaluate("window.zxingGiven") == "/static/vendor/zxing-library-0.23.0.min.js"
        assert Scan.objects.count() == 1
    finally:
        context.close()


def test_a_scanner_told_to_retry_after_holds_off_and_decides_offline_meanwhile(
    match_today, site, new_page
) -> None:
    """A 503 with Retry-After: the scan is decided offline, and so are the next ones for the
    time asked (jittered), without another request: a ground's scanners do not hammer a server
    that is shedding load (static/safeground/scanner-1.js)."""
    page = pair(new_page(PHONE), site, scanner_key("Handheld 1"), "F03")
    asked: list[str] = []

    def shedding(route) -> None:
        asked.append(route.request.url)
        body = '{"code": "unavailable", "field": "", "detail": "overloaded"}'
        route.fulfill(
            status=503, headers={"Retry-After": "30"}, content_type="application/json", body=body
        )

    page.route("**/api/entry/scan", shedding)
    scan(page, "AWAY-1")
    expect_decision(page, "ADMIT", "", "Admit: block S-L2")
    expect(page.locator("[data-decision-mode]")).to_contain_text("OFFLINE")
    scan(page, "AWAY-2")
    expect_decision(page, "ADMIT", "", "Admit: block S-L3")
    expect(page.locator("[data-decision-mode]")).to_contain_text("OFFLINE · queued (2)")
    assert len(asked) == 1  # the second scan did not ask
    assert not Scan.objects.exists()  # and the queue waits as asked: no upload yet
