"""The control room and the police share one live picture: a loggist logs from the keyboard, the
police commander's page shows it on the map and in the log without a reload, and actions on it
show on both."""

from datetime import timedelta

import pytest
from playwright.sync_api import expect

from safeground.accounts.models import User
from safeground.incidents.models import LogEntry
from safeground.incidents.services import Place, log_entry_append
from safeground.matches.models import Fixture

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# How long a test waits for a later `entry.counts` publish (see where it is used).
COUNTS_WAIT_MS = 30_000


def open_control_room(page, site, fixture):
    page.goto(f"{site}/fixtures/{fixture.pk}/control/")
    expect(page.locator("[data-freshness]")).to_contain_text("connected")
    return page


def test_the_log_reads_the_grounds_clock_whatever_the_browsers_zone(site, browser, log_in):
    """One clock (issue 27): the cup tie's entry four minutes after kick-off was at 19:49 BST
    (18:49 UTC); a browser set to another time zone shows 19:49 as well."""
    cup_tie = Fixture.objects.get(away_club__name="Chelsea")
    log_entry_append(
        fixture=cup_tie,
        author=User.objects.get(username="loggist"),
        category="chanting-other",
        text="Taunting between the away section and home fans",
        place=Place(block="S-L2"),
        observed_at=cup_tie.kickoff + timedelta(minutes=4),
    )
    context = browser.new_context(timezone_id="America/New_York")
    try:
        page = open_control_room(log_in(context.new_page(), "loggist"), site, cup_tie)
        expect(page.locator("[data-log] .entry time")).to_have_text("19:49:00")
    finally:
        context.close()


def test_an_entry_logged_from_the_keyboard_reaches_the_police_live(site, new_page, log_in):
    cup_tie = Fixture.objects.get(away_club__name="Chelsea")
    loggist = open_control_room(log_in(new_page(), "loggist"), site, cup_tie)
    police = log_in(new_page(), "police")
    police.get_by_role("link", name="West Ham United v Chelsea").click()
    police.get_by_role("link", name="Open the live log and map").click()
    expect(police.locator("[data-freshness]")).to_contain_text("connected")

    # The loggist never touches the mouse: category has focus; type, Tab, type, Enter.
    expect(loggist.locator("#qe-category")).to_be_focused()
    loggist.keyboard.type("Missile")
    loggist.keyboard.press("Tab")
    loggist.keyboard.type("S-L2")
    loggist.keyboard.press("Tab")
    loggist.keyboard.press("Tab")
    loggist.keyboard.type("Coins thrown at home fans from the away end")
    loggist.keyboard.press("Enter")
    expect(loggist.locator("#qe-category")).to_be_focused()

    report = police.locator("[data-log] .entry[data-incident]")
    expect(report).to_have_count(1)
    expect(report).to_contain_text("Missile thrown")
    expect(report).to_contain_text("Block S-L2")
    expect(report).to_contain_text("Coins thrown at home fans")
    expect(report.locator(".status")).to_have_text("open")
    entry = LogEntry.objects.get()
    assert (entry.author_name, entry.block.code, entry.severity) == ("Priya Nandra", "S-L2", 3)
    expect(police.locator(f'[data-markers] circle[data-incident="{entry.pk}"]')).to_have_count(1)
    expect(police.locator('[data-plan] .block[data-block="S-L2"]')).to_have_class(
        "block zone-away heat-1"
    )

    # The police commander escalates to the police; the loggist sees it without a reload.
    police.get_by_role("button", name="Escalate to police").click()
    expect(loggist.locator("[data-log] .entry[data-incident] .status")).to_have_text("escalated")
    expect(loggist.locator("[data-log] .entry.action")).to_contain_text("escalated to Police")

    # The loggist resolves it; both see the resolution, and the marker fades.
    loggist.get_by_role("button", name="Resolve").click()
    for page in (loggist, police):
        expect(page.locator("[data-log] .entry[data-incident] .status")).to_have_text("resolved")
    expect(police.locator(f'[data-markers] circle[data-incident="{entry.pk}"]')).to_have_class(
        "marker sev-3 faded"
    )
    assert list(LogEntry.objects.values_list("kind", flat=True).order_by("seq")) == [
        "report",
        "escalation",
        "status",
    ]


def test_a_bad_block_is_refused_with_the_reason(site, new_page, log_in):
    cup_tie = Fixture.objects.get(away_club__name="Chelsea")
    page = open_control_room(log_in(new_page(), "loggist"), site, cup_tie)
    page.get_by_label("Block", exact=True).fill("Q-99")
    page.get_by_label("What was seen").fill("Flare")
    page.get_by_label("What was seen").press("Enter")
    expect(page.locator("[data-entry-error]")).to_have_text(
        "block: no block 'Q-99' at London Stadium"
    )
    assert not LogEntry.objects.exists()


def test_clicking_a_block_lists_its_entries(site, new_page, log_in):
    from safeground.accounts.models import User
    from safeground.incidents.services import Place, log_entry_append

    cup_tie = Fixture.objects.get(away_club__name="Chelsea")
    for block, text in [("S-L1", "Seat thrown"), ("N-L1", "Lost child found")]:
        log_entry_append(
            fixture=cup_tie,
            author=User.objects.get(username="safety"),
            category="other",
            text=text,
            place=Place(block=block),
        )
    page = open_control_room(log_in(new_page(), "safety"), site, cup_tie)
    expect(page.locator("[data-log] .entry")).to_have_count(2)
    page.locator('[data-plan] .block[data-block="S-L1"]').click()
    listed = page.locator("[data-block-entries] .entry")
    expect(listed).to_have_count(1)
    expect(listed).to_contain_text("Seat thrown")


def test_the_control_room_posts_a_steward_broadcasts_and_sees_who_acknowledged(
    site, new_page, log_in
):
    from safeground.accounts.models import User
    from safeground.incidents.broadcasting import broadcast_ack
    from safeground.incidents.models import Broadcast

    cup_tie = Fixture.objects.get(away_club__name="Chelsea")
    page = open_control_room(log_in(new_page(), "safety"), site, cup_tie)
    page.get_by_role("tab", name="Posts").click()
    post_form = page.locator("[data-post-form]")
    post_form.get_by_label("Steward").select_option("steward")
    post_form.get_by_label("Post").select_option("away-se-cup")
    post_form.get_by_role("button", name="Post steward").click()
    expect(page.locator('[data-post="steward"]')).to_have_text("Kim Ashby: Away section (cup)")

    page.get_by_role("tab", name="Broadcasts").click()
    form = page.locator("[data-broadcast-form]")
    form.get_by_label("Message", exact=True).select_option("hold")
    form.get_by_label("To").select_option("away-se-cup")
    form.get_by_role("button", name="Send broadcast").click()
    sent = page.locator("[data-broadcast-list] li")
    expect(sent).to_have_count(1)
    expect(sent).to_contain_text("Hold at the gates (Away section (cup))")
    expect(sent.locator("[data-broadcast-waiting]")).to_have_text("waiting for: steward")

    broadcast_ack(broadcast=Broadcast.objects.get(), user=User.objects.get(username="steward"))
    expect(sent.locator("[data-broadcast-acks]")).to_have_text("acknowledged: steward")
    expect(sent.locator("[data-broadcast-waiting]")).to_have_text("everyone has acknowledged")


def test_a_broadcast_to_nobody_is_refused_with_the_reason(site, new_page, log_in):
    cup_tie = Fixture.objects.get(away_club__name="Chelsea")
    page = open_control_room(log_in(new_page(), "loggist"), site, cup_tie)
    page.get_by_role("tab", name="Broadcasts").click()
    form = page.locator("[data-broadcast-form]")
    form.get_by_label("Message", exact=True).select_option("free")
    form.get_by_label("Text (optional for scripted messages)").fill("x" * 10)
    form.get_by_role("button", name="Send broadcast").click()
    expect(page.locator("[data-broadcast-error]")).to_have_text(
        "recipients: no steward is posted for this match yet"
    )


def test_the_gates_panel_counts_admissions_and_denials_live(site, new_page, log_in):
    import json
    import urllib.request
    import uuid
    from datetime import timedelta

    from django.utils import timezone

    from safeground.accounts.models import Organisation
    from safeground.accounts.services import device_create
    from safeground.bans.models import Ban
    from safeground.entry.models import Ticket, TicketFlag

    cup_tie = Fixture.objects.get(away_club__name="Chelsea")
    page = open_control_room(log_in(new_page(), "safety"), site, cup_tie)
    page.get_by_role("tab", name="Gates").click()
    expect(page.locator("[data-entry-counts] [data-admitted]")).to_have_text("0")
    _, key = device_create(
        organisation=Organisation.objects.get(name="West Ham United"),
        name="Gate F turnstile 3",
        profile="turnstile",
    )
    away = list(Ticket.objects.filter(fixture=cup_tie, end="away").order_by("barcode")[:2])
    ticket, banned = away
    TicketFlag.objects.create(
        ticket=banned,
        ban=Ban.objects.filter(status=Ban.Status.ACTIVE).order_by("pk").first(),
        score=97.0,
        status="confirmed",
        flagged_at=timezone.now(),
    )

    def scan(barcode: str = ticket.barcode) -> dict:
        body = {
            "barcode": barcode,
            "turnstile": "F03",
            "scanned_at": (cup_tie.kickoff - timedelta(minutes=40)).isoformat(),
            "nonce": str(uuid.uuid4()),
        }
        request = urllib.request.Request(
            f"{site}/api/entry/scan",
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json", "X-Device-Key": key},
        )
        with urllib.request.urlopen(request, timeout=10) as answer:
            return json.loads(answer.read())

    assert scan()["decision"] == "admit"
    assert scan()["reason"] == "already_inside"  # the same ticket at the turnstile again
    box = page.locator("[data-entry-counts]")
    expect(box.locator("[data-admitted]")).to_have_text("1", timeout=COUNTS_WAIT_MS)
    expect(box.locator("[data-denied]")).to_have_text("1", timeout=COUNTS_WAIT_MS)
    expect(box.locator("[data-denied-reasons]")).to_have_text(
        "Denied: Already inside 1", timeout=COUNTS_WAIT_MS
    )
    expect(box.locator('[data-zone-counts] tr[data-zone="away-se-cup"] td').nth(1)).to_have_text(
        "1", timeout=COUNTS_WAIT_MS
    )

    assert scan(banned.barcode)["reason"] == "banned"
    turned_away = box.locator("[data-banned-denials] li")
    expect(turned_away).to_have_count(1)
    expect(turned_away).to_contain_text("turnstile F03")
    expect(turned_away).to_contain_text(f"ticket for {banned.block.code}")
    # The counts are published at most every 20 times their last read's cost after the first
    # (entry/runtime/live_counts.py): on a loaded machine that is well over the default 5 s.
    expect(box.locator("[data-prevented]")).to_have_text("1", timeout=COUNTS_WAIT_MS)


def test_a_stewards_photo_shows_on_its_entry(site, new_page, log_in):
    from django.contrib.auth import get_user_model
    from django.core.files.uploadedfile import SimpleUploadedFile

    from safeground.incidents.photos import log_entry_photo_add
    from safeground.incidents.services import Place, log_entry_append

    cup_tie = Fixture.objects.get(away_club__name="Chelsea")
    page = open_control_room(log_in(new_page(), "loggist"), site, cup_tie)
    steward = get_user_model().objects.get(username="steward")
    report = log_entry_append(
        fixture=cup_tie,
        author=steward,
        category="pyrotechnic",
        text="Flare lit in S-L2",
        place=Place(block="S-L2"),
    )
    png = bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
    )
    upload = SimpleUploadedFile("flare.png", png, content_type="image/png")
    photo = log_entry_photo_add(entry=report, author=steward, upload=upload)

    image = page.locator(f'[data-log] .entry[data-incident="{report.pk}"] .entry-photos img')
    expect(image).to_have_count(1)
    expect(image).to_have_attribute("title", f"SHA-256 {photo.sha256}")
    # Loaded through the authenticated route: a broken image has no natural width.
    page.wait_for_function(
        "img => img.complete && img.naturalWidth === 1", arg=image.element_handle()
    )
    # A reload brings it back with the catch-up.
    page.reload()
    expect(image).to_have_count(1)


def test_the_match_so_far_sits_by_the_log_warnings_stay_pinned_and_nothing_is_off_the_map(
    site, new_page, log_in
):
    from datetime import timedelta

    from django.utils import timezone

    from safeground.accounts.models import User
    from safeground.incidents.services import Place, log_entry_append, log_entry_warn
    from safeground.matches.selectors import fixture_safe_capacities

    cup_tie = Fixture.objects.get(away_club__name="Chelsea")
    page = open_control_room(log_in(new_page(), "loggist"), site, cup_tie)
    loggist = User.objects.get(username="loggist")
    for category, place in [
        ("arrest", Place(block="S-L2")),
        ("arrest", Place(block="S-L1")),
        ("ejection", Place(block="S-L1")),
        ("medical", Place(outside="Car park B, by the coach bays")),
    ]:
        log_entry_append(
            fixture=cup_tie, author=loggist, category=category, text="seen", place=place
        )
    reports = LogEntry.objects.filter(fixture=cup_tie, kind="report")
    for code in ("arrest", "ejection", "medical"):
        expected = str(reports.filter(category__code=code).count())
        expect(page.locator(f"[data-tally-{code}]")).to_have_text(expected)
    safe = sum(
        capacity.safe
        for zone_id, capacity in fixture_safe_capacities(cup_tie).items()
        if cup_tie.zones.get(zone_id=zone_id).use != "buffer"
    )
    expect(page.locator("[data-tally-inside]")).to_have_text(f"0 of {safe:,}")
    expect(page.locator("[data-tally-denied]")).to_have_text("0")

    # The medical case outside the ground is on the strip beside the map, not nowhere.
    expect(page.locator("[data-outside-list] li")).to_have_count(1)
    expect(page.locator("[data-outside-list]")).to_contain_text("Car park B, by the coach bays")
    expect(page.locator("[data-map-legend]")).to_contain_text("flashpoint warning")

    # A flashpoint warning is pinned above the log with an alarm until it is acknowledged.
    away = cup_tie.zones.get(use="away").zone
    now = timezone.now()
    log_entry_warn(
        fixture=cup_tie,
        zone_id=away.pk,
        at=now,
        severity=4,
        text=f"Flashpoint building in {away.name}: test",
        links=list(reports.values_list("seq", flat=True)),
        quiet_since=now - timedelta(minutes=10),
    )
    pinned = page.locator("[data-pinned-warnings]")
    expect(pinned).to_be_visible()
    expect(pinned).to_contain_text(f"Flashpoint building in {away.name}")
    expect(pinned).to_have_attribute("data-alarms", "1")
    pinned.get_by_role("button", name="Acknowledge").click()
    expect(pinned).to_be_hidden()
    page.reload()
    expect(page.locator("[data-freshness]")).to_contain_text("connected")
    expect(page.locator("[data-log] .entry.warning")).to_have_count(1)
    expect(pinned).to_be_hidden()  # acknowledged stays acknowledged

    # The panels are reached by keyboard without scrolling past the log: tabs and skip links.
    page.get_by_role("tab", name="Map").focus()
    page.keyboard.press("ArrowRight")
    expect(page.get_by_role("tab", name="Gates")).to_be_focused()
    expect(page.locator("[data-entry-counts]")).to_be_visible()
    expect(page.locator("#panel-map")).to_be_hidden()
    page.get_by_role("link", name="Steward posts").click()
    expect(page.get_by_role("tab", name="Posts")).to_have_attribute("aria-selected", "true")
    expect(page.locator("[data-post-form]")).to_be_visible()


def test_the_log_is_in_time_order_with_late_entries_placed_by_their_time(site, new_page, log_in):
    """Issue 38: an entry logged late (a replay, a phone back online) sits where its time puts it,
    its number beside it; one arriving live is placed by its time as well."""
    cup_tie = Fixture.objects.get(away_club__name="Chelsea")
    loggist = User.objects.get(username="loggist")

    def append(text: str, minutes: int) -> LogEntry:
        at = cup_tie.kickoff + timedelta(minutes=minutes)
        return log_entry_append(fixture=cup_tie, author=loggist, category="other", text=text,
                                place=Place(block="S-L2"), observed_at=at)  # fmt: skip

    late = append("Arrest at the away turnstiles", 98)
    early = append("Gangway blocked at the start", 2)
    page = open_control_room(log_in(new_page(), "loggist"), site, cup_tie)
    log = page.locator("[data-log] > li")
    expect(log).to_have_count(2)
    expect(log.nth(0)).to_contain_text(f"#{late.seq}")
    expect(log.nth(1)).to_contain_text(f"#{early.seq}")

    middle = append("Coins thrown at half time", 50)  # the highest number, live, in the middle
    expect(log).to_have_count(3)
    expect(log.nth(0)).to_contain_text("Arrest at the away turnstiles")
    expect(log.nth(1)).to_contain_text(f"#{middle.seq}")
    expect(log.nth(1)).to_contain_text("Coins thrown at half time")
    expect(log.nth(2)).to_contain_text("Gangway blocked at the start")
