"""A steward's phone page next to the control room: reports made with no network wait in the
outbox and arrive once each when it returns; a refused one is shown with the reason; broadcasts
show over everything until acknowledged; tasks are accepted and done from the phone; a steward
follows their own report, wherever it is, as the control room acts on it."""

import re
from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import ConsoleMessage, Page, expect

from safeground.accounts.models import User
from safeground.incidents.broadcasting import broadcast_send
from safeground.incidents.models import BroadcastAck, LogEntry, Photo
from safeground.incidents.posts import steward_post_assign
from safeground.incidents.selectors import RECORD_KINDS
from safeground.incidents.services import (
    Place,
    log_entry_append,
    log_entry_assign,
    log_entry_set_status,
)
from safeground.matches.models import Fixture
from safeground.venues.models import Block

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def log_entries():
    """The log's entries, without the chained records (the steward's post is one: issue 15)."""
    return LogEntry.objects.exclude(kind__in=RECORD_KINDS)


PHONE = {"width": 390, "height": 844}


def cup_tie() -> Fixture:
    return Fixture.objects.get(away_club__name="Chelsea")


def post_steward(fixture: Fixture) -> None:
    steward_post_assign(
        fixture=fixture,
        steward=User.objects.get(username="steward"),
        assigned_by=User.objects.get(username="loggist"),
        zone="away-se-cup",
    )


def open_control_room(page: Page, site: str, fixture: Fixture) -> Page:
    page.goto(f"{site}/fixtures/{fixture.pk}/control/")
    expect(page.locator("[data-freshness]")).to_contain_text("connected")
    return page


def open_steward_page(page: Page, site: str, fixture: Fixture) -> Page:
    page.goto(f"{site}/fixtures/{fixture.pk}/steward/")
    expect(page.locator("[data-freshness]")).to_contain_text("connected")
    return page


# The smallest valid PNG: one transparent pixel.
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
)


def file_report(page: Page, category: str, block: str, text: str, photo: bool = False) -> None:
    report = page.locator("[data-report]")
    report.get_by_text(category, exact=True).click()
    report.locator(".chip", has_text=block).click()
    report.get_by_label("Details (optional)").fill(text)
    if photo:
        report.get_by_label("Photo (optional)").set_input_files(
            {"name": "fainted.png", "mimeType": "image/png", "buffer": PNG}
        )
    report.get_by_role("button", name="Send report").click()


def test_reports_made_offline_reach_the_control_room_once_each(site, new_page, log_in):
    fixture = cup_tie()
    post_steward(fixture)
    loggist = open_control_room(log_in(new_page(), "loggist"), site, fixture)

    # The steward finds their page from the match page, on a phone.
    phone = log_in(new_page(PHONE), "steward")
    phone.get_by_role("link", name="West Ham United v Chelsea").click()
    phone.get_by_role("link", name="Open my steward page").click()
    expect(phone.locator("[data-freshness]")).to_contain_text("connected")
    expect(phone.locator("[data-post]")).to_have_text("Your post: Away section (cup)")
    expect(phone.locator("[data-steward]")).to_have_attribute("data-offline-ready", "true")

    phone.context.set_offline(True)
    expect(phone.locator("[data-freshness]")).to_contain_text("offline")
    reports = [
        ("Missile thrown", "S-L2", "Coins thrown from row F"),
        ("Pyrotechnic", "S-L3", "Flare lit at the front"),
        ("Medical", "E-L9", "Fan fainted on the stairs"),
    ]
    for n, (category, block, text) in enumerate(reports, start=1):
        file_report(phone, category, block, text, photo=n == 3)
        expect(phone.locator("[data-outbox-count]")).to_have_text(f"queued ({n})")
    expect(phone.locator("[data-freshness]")).to_have_text("offline · 3 queued")

    # Still offline, the page opens again from the service worker, with its outbox intact.
    phone.reload()
    expect(phone.locator("[data-post]")).to_have_text("Your post: Away section (cup)")
    expect(phone.locator("[data-outbox-count]")).to_have_text("queued (3)")
    assert not log_entries().exists()

    phone.context.set_offline(False)
    expect(phone.locator("[data-outbox-count]")).to_have_text("queued (0)", timeout=15_000)
    expect(phone.locator("[data-sent] li")).to_have_count(3)

    log = loggist.locator("[data-log] .entry[data-incident]")
    for _, block, text in reports:
        expect(log.filter(has_text=text)).to_have_count(1)
        expect(log.filter(has_text=text)).to_contain_text(f"Block {block}")
    stored = list(LogEntry.objects.filter(kind="report").order_by("seq"))
    assert [(e.block.code, e.text, e.author_name) for e in stored] == [  # type: ignore[union-attr]
        (block, text, "Kim Ashby") for _, block, text in reports
    ]
    assert all(e.idempotency_key for e in stored)
    assert stored[0].observed_at < stored[2].observed_at < stored[0].logged_at
    photo = Photo.objects.get()  # kept in the outbox with its report, sent after it
    assert (photo.entry_id, photo.content_type, photo.size) == (stored[2].pk, "image/png", len(PNG))
    for entry in stored:
        expect(loggist.locator(f'[data-markers] circle[data-incident="{entry.pk}"]')).to_have_count(
            1
        )


# The phone's clock ten minutes behind the server's: every Date the page makes, and Date.now().
TEN_MINUTES_BEHIND = """
(() => {
  const Real = Date;
  const offset = -10 * 60 * 1000;
  class Behind extends Real {
    constructor(...args) {
      if (args.length) super(...args);
      else super(Real.now() + offset);
    }
    static now() {
      return Real.now() + offset;
    }
  }
  globalThis.Date = Behind;
})();
"""


def test_a_phone_ten_minutes_behind_is_placed_by_the_servers_time_and_marked(
    site, new_page, log_in
):
    """ADR 0026: the phone says what its clock reads as it sends; the control room lists the
    report where it happened (above an entry logged two minutes ago, not ten minutes down the
    log) and says the phone's clock is ten minutes behind."""
    fixture = cup_tie()
    post_steward(fixture)
    log_entry_append(
        fixture=fixture,
        author=User.objects.get(username="loggist"),
        category="disorder",
        text="Scuffle at the buffer",
        place=Place(block="S-L4"),
        observed_at=timezone.now() - timedelta(minutes=2),
    )
    loggist = open_control_room(log_in(new_page(), "loggist"), site, fixture)
    phone = new_page(PHONE)
    phone.context.add_init_script(TEN_MINUTES_BEHIND)
    phone = open_steward_page(log_in(phone, "steward"), site, fixture)
    assert phone.evaluate("Date.now()") < loggist.evaluate("Date.now()") - 9 * 60 * 1000

    file_report(phone, "Missile thrown", "S-L2", "Coins thrown from row F")
    expect(phone.locator("[data-report-message]")).to_have_text("Sent to the control room.")

    log = loggist.locator("[data-log] .entry[data-incident]")
    expect(log).to_have_count(2)
    expect(log.first).to_contain_text("Coins thrown from row F")
    expect(log.first.locator("[data-clock]")).to_have_text("(phone clock 10 min behind)")
    expect(log.nth(1)).to_contain_text("Scuffle at the buffer")
    expect(log.nth(1).locator("[data-clock]")).to_be_hidden()
    entry = log_entries().get(text="Coins thrown from row F")
    assert abs(entry.logged_at - entry.observed_at) < timedelta(seconds=10)
    assert entry.device_observed_at is not None
    behind = entry.logged_at - entry.device_observed_at
    assert timedelta(minutes=9, seconds=50) < behind < timedelta(minutes=10, seconds=30)
    # A fresh control room draws it from the server in the same place, with the same mark.
    loggist.reload()
    expect(log.first.locator("[data-clock]")).to_have_text("(phone clock 10 min behind)")


def test_a_report_whose_answer_is_lost_is_sent_again_and_stored_once(site, new_page, log_in):
    fixture = cup_tie()
    post_steward(fixture)
    phone = open_steward_page(log_in(new_page(PHONE), "steward"), site, fixture)
    answers_lost = []

    def lose_the_answer(route):
        route.fetch()  # the server stores the report...
        answers_lost.append(route.request.post_data_json["idempotency_key"])
        route.abort("connectionreset")  # ...and its answer never reaches the phone

    phone.route(f"**/api/fixtures/{fixture.pk}/log", lose_the_answer, times=1)
    file_report(phone, "Other", "S-L1", "Gangway blocked by a bag")
    expect(phone.locator("[data-sent] li")).to_have_count(1, timeout=15_000)  # the retry timer
    expect(phone.locator("[data-outbox-count]")).to_have_text("queued (0)")

    entry = log_entries().get()
    assert answers_lost == [entry.idempotency_key]
    expect(phone.locator("[data-sent] li")).to_contain_text(f"logged as #{entry.seq}")


def test_a_report_refused_after_the_network_returns_is_shown_with_the_reason(
    site, new_page, log_in
):
    fixture = cup_tie()
    post_steward(fixture)
    phone = open_steward_page(log_in(new_page(PHONE), "steward"), site, fixture)
    expect(phone.locator("[data-steward]")).to_have_attribute("data-offline-ready", "true")

    phone.context.set_offline(True)
    file_report(phone, "Missile thrown", "S-L2", "Seat thrown")
    file_report(phone, "Medical", "S-L3", "Steward hit by the seat")
    expect(phone.locator("[data-outbox-count]")).to_have_text("queued (2)")
    # Meanwhile the block is renamed (gone, as far as the report is concerned).
    Block.objects.filter(code="S-L2").update(code="S-L2X")
    phone.context.set_offline(False)

    expect(phone.locator("[data-outbox-count]")).to_have_text("queued (0)", timeout=15_000)
    refused = phone.locator("[data-refused] li")
    expect(refused).to_have_count(1)
    expect(refused).to_contain_text("Missile thrown · Block S-L2 · Seat thrown")
    expect(refused.locator("[data-reason]")).to_have_text(
        "block: no block 'S-L2' at London Stadium"
    )
    # The refusal does not hold up the report made after it.
    assert list(log_entries().values_list("text", flat=True)) == ["Steward hit by the seat"]

    # It stays on the phone (after a reload too) until the steward says they have seen it.
    phone.reload()
    expect(phone.locator("[data-refused] li")).to_have_count(1)
    phone.get_by_role("button", name="Seen: Missile thrown · Block S-L2 · Seat thrown").click()
    expect(phone.locator("[data-refused-section]")).to_be_hidden()


def test_a_broadcast_shows_over_the_page_until_acknowledged(site, new_page, log_in):
    fixture = cup_tie()
    post_steward(fixture)
    safety = User.objects.get(username="safety")
    loggist = open_control_room(log_in(new_page(), "loggist"), site, fixture)
    # One sent before the steward opens the page: shown as soon as it opens.
    earlier = broadcast_send(fixture=fixture, sent_by=safety, script="hold")
    phone = open_steward_page(log_in(new_page(PHONE), "steward"), site, fixture)

    dialog = phone.locator("[data-broadcast]")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("Hold at the gates")
    # A page the service worker kept holds the token of an earlier login: the POST reads the
    # cookie's, the fresh one (static/safeground/api-1.js), and is not refused.
    phone.evaluate("document.querySelector('meta[name=\"csrf-token\"]').content = 'x'.repeat(64)")
    phone.get_by_role("button", name="Acknowledge").click()
    expect(dialog).to_be_hidden()
    assert BroadcastAck.objects.filter(broadcast=earlier, user__username="steward").exists()

    # One sent while the page is open: it comes over the live socket, over the report form.
    phone.get_by_text("Medical", exact=True).click()
    later = broadcast_send(
        fixture=fixture, sent_by=safety, script="free", text="Close gate C now", zone="away-se-cup"
    )
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("Close gate C now")
    expect(dialog).to_contain_text("Away section (cup)")
    phone.get_by_role("button", name="Acknowledge").click()
    expect(dialog).to_be_hidden()
    assert BroadcastAck.objects.filter(broadcast=later, user__username="steward").exists()

    acks = loggist.locator("[data-broadcast-acks]")
    if acks.count():  # the control room's live acknowledgements (built alongside this page)
        for box in acks.all():
            expect(box).to_contain_text(re.compile(r"Kim Ashby|steward"))


def test_a_task_is_accepted_and_done_from_the_phone(site, new_page, log_in):
    fixture = cup_tie()
    post_steward(fixture)
    loggist_user = User.objects.get(username="loggist")
    report = log_entry_append(
        fixture=fixture,
        author=loggist_user,
        category="disorder",
        text="Scuffle at the buffer",
        place=Place(block="S-L4"),
    )
    loggist = open_control_room(log_in(new_page(), "loggist"), site, fixture)
    phone = open_steward_page(log_in(new_page(PHONE), "steward"), site, fixture)
    expect(phone.locator("[data-no-tasks]")).to_be_visible()

    log_entry_assign(
        entry=report, author=loggist_user, assignee=User.objects.get(username="steward")
    )
    task = phone.locator(f'[data-tasks] li[data-task="{report.pk}"]')
    expect(task).to_contain_text("Fighting / disorder · Block S-L4")
    expect(task).to_contain_text("Scuffle at the buffer")
    task.get_by_role("button", name="Accept").click()
    expect(task.locator("[data-task-state]")).to_have_text("accepted")
    task.get_by_role("button", name="Done").click()
    expect(task.locator("[data-task-state]")).to_have_text("done")

    incident = loggist.locator(f'[data-log] .entry[data-incident="{report.pk}"]')
    expect(incident).to_contain_text("assigned to Kim Ashby (done)")
    assert list(
        LogEntry.objects.filter(kind="task").order_by("seq").values_list("task", flat=True)
    ) == ["accepted", "done"]

    # A fresh page knows the task too (from the server, not only from live frames).
    phone.reload()
    expect(
        phone.locator(f'[data-tasks] li[data-task="{report.pk}"] [data-task-state]')
    ).to_have_text("done")


def test_a_steward_with_no_post_follows_their_own_report_to_resolved(site, new_page, log_in):
    fixture = cup_tie()  # no post for the steward: nothing of the log reaches them by zone
    loggist = User.objects.get(username="loggist")
    phone = open_steward_page(log_in(new_page(PHONE), "steward"), site, fixture)
    expect(phone.locator("[data-post]")).to_have_text("No post yet: ask the control room")
    expect(phone.locator("[data-steward]")).to_have_attribute("data-offline-ready", "true")

    report = phone.locator("[data-report]")
    report.get_by_text("Missile thrown", exact=True).click()
    report.locator("#st-block").select_option("N-L1")
    report.get_by_label("Details (optional)").fill("Coins thrown from row F")
    report.get_by_role("button", name="Send report").click()
    expect(phone.locator("[data-report-message]")).to_have_text("Sent to the control room.")

    entry = log_entries().get()
    mine = phone.locator(f'[data-sent] li[data-report="{entry.pk}"]')
    expect(mine).to_contain_text("Missile thrown · Block N-L1 · Coins thrown from row F")
    expect(mine.locator("[data-report-state]")).to_have_text("received")

    log_entry_assign(entry=entry, author=loggist, assignee=User.objects.get(username="supervisor"))
    expect(mine.locator("[data-report-state]")).to_have_text("assigned")

    # Opened again with no network (the service worker's copy of the page from before the
    # report): the phone still shows it, as it last stood.
    phone.context.set_offline(True)
    phone.reload()
    expect(mine.locator("[data-report-state]")).to_have_text("assigned")

    # Back on the network, the control room resolves it: the phone hears of it.
    phone.context.set_offline(False)
    expect(phone.locator("[data-freshness]")).to_contain_text("connected", timeout=15_000)
    log_entry_set_status(entry=entry, author=loggist, status="resolved")
    expect(mine.locator("[data-report-state]")).to_have_text("resolved")

    # A fresh page has it from the server too, and nothing of anyone else's.
    phone.reload()
    expect(phone.locator("[data-sent] li")).to_have_count(1)
    expect(mine.locator("[data-report-state]")).to_have_text("resolved")


def test_the_steward_page_works_with_no_console_error(site, new_page, log_in):
    """The Content Security Policy allows no inline style: nothing the page draws (its panels,
    a report followed, a broadcast, a task) may need one (issue 38: 9 errors)."""
    fixture = cup_tie()
    post_steward(fixture)
    room = open_control_room(log_in(new_page(), "loggist"), site, fixture)
    phone = log_in(new_page(PHONE), "steward")
    errors: list[str] = []
    phone.add_init_script(VIOLATIONS)
    phone.on("console", lambda m: errors.append(m.text) if _an_error(m) else None)
    phone.on("pageerror", lambda e: errors.append(str(e)))
    open_steward_page(phone, site, fixture)

    file_report(phone, "Missile thrown", "S-L2", "Coins thrown from row F")
    expect(room.locator("[data-log] li").first).to_contain_text("Coins thrown from row F")
    broadcast_send(fixture=fixture, sent_by=User.objects.get(username="loggist"), script="hold")
    phone.get_by_role("button", name="Acknowledge").click()
    expect(phone.locator("[data-broadcast]")).to_be_hidden()
    phone.reload()
    expect(phone.locator("[data-freshness]")).to_contain_text("connected")
    expect(phone.locator("[data-sent] li").first).to_contain_text("Coins thrown from row F")

    assert errors == []
    assert phone.evaluate("window.__violations") == []


# Each Content Security Policy violation, caught by the page (the console may word it otherwise).
VIOLATIONS = """
window.__violations = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__violations.push(`${e.violatedDirective} ${e.blockedURI} ${e.sourceFile}`);
});
"""


def _an_error(message: ConsoleMessage) -> bool:
    """An error in the console; not the favicon's 404 (issue 38 row 5, a change of its own)."""
    return message.type == "error" and not message.location["url"].endswith("/favicon.ico")
