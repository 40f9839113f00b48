"""The issue's "done when": a phone at seat E-L1/A/1 opens its QR code's address and reports
racist abuse with a photo; the control room sees it in its queue and on the map within a second,
a second report from the next seat joins it, the loggist accepts it into the log and tasks the
nearest steward; the reporter's status page shows it dealt with."""

import io

import pytest
from PIL import Image
from playwright.sync_api import expect

from safeground.accounts.models import User
from safeground.demo.season import rerun_load
from safeground.incidents.posts import steward_post_assign
from safeground.incidents.services import log_entry_set_status
from safeground.supporters.models import TriageItem
from safeground.supporters.seats import seat_code

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE = {"width": 390, "height": 844}
DESK = {"width": 1366, "height": 900}


def _photo() -> dict:
    out = io.BytesIO()
    Image.new("RGB", (64, 48), "orange").save(out, format="JPEG")
    return {"name": "abuse.jpg", "mimeType": "image/jpeg", "buffer": out.getvalue()}


def _report(page, site: str, seat: str, text: str, photo: bool) -> None:
    page.goto(f"{site}/s/{seat}/")
    page.get_by_label("Racist abuse").check()
    page.get_by_label("What did you see?").fill(text)
    if photo:
        page.get_by_label("A photo").set_input_files(_photo())
    page.get_by_role("button", name="Send report").click()
    expect(page.locator("[data-status-label]")).to_contain_text("Received")


def _queue_of_one(site: str, new_page, log_in):
    """The rerun's control room, its queue showing one report from E-L1; `report(n)` sends the
    n-th device's report from the same block."""
    from safeground.supporters.services import Sender, report_receive

    rerun = rerun_load()
    block = rerun.ground.blocks.get(code="E-L1")

    def report(n: int) -> None:
        device = Sender("web", f"device-{n:04d}-abcdefghijkl", "10.0.0.9")
        report_receive(fixture=rerun, sender=device, block=block, category="standing")

    report(1)
    room = log_in(new_page(DESK), "loggist")
    room.goto(f"{site}/fixtures/{rerun.pk}/control/")
    item = room.locator("[data-supporters-queue] li[data-item]")
    expect(item).to_have_attribute("data-item-count", "1")
    return room, item, report


def test_a_seat_reports_the_control_room_groups_accepts_tasks_and_the_reporter_sees_it_dealt_with(
    site, new_page, log_in
):
    rerun = rerun_load()  # the demo's cup tie again, kicking off in a few hours: on now
    block = rerun.ground.blocks.get(code="E-L1")
    loggist = User.objects.get(username="loggist")
    steward_post_assign(fixture=rerun, steward=User.objects.get(username="steward"),
                        assigned_by=loggist, zone="home-east")  # fmt: skip
    room = log_in(new_page(DESK), "loggist")
    room.goto(f"{site}/fixtures/{rerun.pk}/control/")
    expect(room.locator("[data-freshness]")).not_to_have_text("connecting…")
    expect(room.locator("[data-supporters-queue]")).to_contain_text("No supporters' reports")

    phone = new_page(PHONE)
    phone.goto(f"{site}/s/{seat_code(block, 'A', 1)}/")
    expect(phone.locator("[data-seat]")).to_have_attribute("data-seat", "E-L1/A/1")
    _report(phone, site, seat_code(block, "A", 1), "Man in a red hat making monkey noises", True)
    status_url = phone.url

    item = room.locator("[data-supporters-queue] li[data-item]")
    # Live, without a reload (the 200 ms target is bench_supporters' to measure, not a loaded
    # test machine's).
    expect(item).to_have_count(1, timeout=10_000)
    expect(item).to_have_attribute("data-item-block", "E-L1")
    expect(room.locator('[data-plan] g.block[data-block="E-L1"]')).to_have_class(
        "block zone-home supporter-reported", timeout=10_000
    )
    expect(item.locator("[data-photo]")).to_have_count(1)

    _report(new_page(PHONE), site, seat_code(block, "A", 2), "Same man, still at it", False)
    expect(item).to_have_attribute("data-item-count", "2", timeout=10_000)
    assert TriageItem.objects.count() == 1

    item.locator("[data-accept-task]").click()
    decided = room.locator("[data-supporters-decided] li")
    expect(decided).to_contain_text("Accepted into the log")
    expect(decided.locator("[data-tasked]")).to_be_visible()
    expect(room.locator("[data-log]")).to_contain_text("Supporter reports ×2")
    expect(room.locator('[data-plan] g.block[data-block="E-L1"]')).not_to_have_class(
        "block zone-home supporter-reported"
    )

    entry = TriageItem.objects.get().log_entry
    assert entry is not None
    log_entry_set_status(entry=entry, author=loggist, status="resolved", note="Ejected")
    phone.goto(status_url)
    expect(phone.locator("[data-status]")).to_have_attribute("data-status", "dealt_with")
    expect(phone.locator("[data-status-label]")).to_have_text("Dealt with")


def test_a_dismissal_being_typed_survives_the_queue_refreshing_under_it(site, new_page, log_in):
    """A flood refreshes the queue while the loggist types why an item is dismissed: the reason
    is still there when they press Dismiss, and the item is dismissed with it."""
    room, item, report = _queue_of_one(site, new_page, log_in)
    reason = item.get_by_label("Reason")
    reason.fill("Standing in the safe-standing rows")
    report(2)  # its frame refreshes the queue
    expect(item).to_have_attribute("data-item-count", "2")
    expect(reason).to_have_value("Standing in the safe-standing rows")
    item.locator("[data-dismiss]").click()
    expect(room.locator("[data-supporters-decided] li")).to_contain_text(
        "(Standing in the safe-standing rows)"
    )
    assert TriageItem.objects.get().reason == "Standing in the safe-standing rows"


def test_a_screen_given_the_queue_from_before_a_report_reads_it_again_by_itself(
    site, new_page, log_in, settings
):
    """The queue is made at most once a gap for every screen. A report within the gap is
    answered with the queue from before it and when to read again: the screen reads it again
    then by itself, and shows the report, with no other frame to prompt it."""
    from safeground.supporters.triage_views import _copies

    settings.SAFEGROUND_LOG_CACHE_SECONDS = 60.0
    settings.SAFEGROUND_SUPPORTERS_QUEUE_GAP_SECONDS = 3.0
    _copies.clear()
    _room, item, report = _queue_of_one(site, new_page, log_in)
    report(2)  # its frame asks within the gap: the queue from before, and when to read again
    expect(item).to_have_attribute("data-item-count", "2", timeout=10_000)


def test_the_control_rooms_queue_during_a_flood(site, new_page, log_in):
    """A stand floods the line with one complaint while reports wait from around the ground, and
    someone collapses in the middle of it: the loggist sees the count at the top of the control
    room, skips to the queue, finds the medical report at its top, the heading counting every
    item waiting, and the rest on the next page, which a refresh keeps."""
    import itertools
    from datetime import timedelta

    from django.utils import timezone

    from safeground.supporters.categories import CATEGORIES
    from safeground.supporters.services import Sender, report_receive

    rerun = rerun_load()
    blocks = {b.code: b for b in rerun.ground.blocks.all()}

    def report(device: str, block: str, category: str, **kw) -> TriageItem:
        sender = Sender("web", f"device-{device}-abcdefghijkl", f"10.3.{len(device)}.9")
        return report_receive(
            fixture=rerun, sender=sender, block=blocks[block], category=category, **kw
        ).item

    # 55 reports from around the ground in the hour before, each its own item.
    places = itertools.product(sorted(blocks), [c.code for c in CATEGORIES if c.severity > 1])
    for n, (block, category) in enumerate(itertools.islice(places, 55)):
        item = report(f"single-{n}", block, category)
        when = timezone.now() - timedelta(minutes=60 - n)
        TriageItem.objects.filter(pk=item.pk).update(first_at=when, last_at=when)

    room = log_in(new_page(DESK), "loggist")
    room.goto(f"{site}/fixtures/{rerun.pk}/control/")
    expect(room.locator("[data-freshness]")).not_to_have_text("connecting…")
    top = room.locator("#supporters-queue-count")
    expect(top).to_have_text("(55 waiting)")

    for n in range(30):
        report(f"flood-{n}", "E-L1", "smoking")
    medical = report("medical", "E-L2", "medical", text="Man collapsed on the stairs")
    for n in range(30, 60):
        report(f"flood-{n}", "E-L1", "smoking")

    # At the top of the page: the count, and a link to the queue.
    expect(top).to_have_text("(57 waiting, 1 life at risk)")
    room.get_by_role("link", name="Supporters' reports").click()
    panel = room.locator("#supporters-queue")
    expect(panel).to_be_focused()
    expect(panel).to_be_in_viewport()
    items = room.locator("[data-supporters-queue] li[data-item]")
    expect(items.first).to_have_attribute("data-item", str(medical.pk))
    expect(items.first).to_contain_text("A life at risk")
    expect(items.first).to_contain_text("Man collapsed on the stairs")
    expect(room.locator("[data-queue-count]")).to_have_text("57 waiting")
    expect(items).to_have_count(50)
    expect(room.locator("[data-queue-shown]")).to_contain_text("1–50 of 57")

    room.locator("[data-queue-next]").click()
    expect(room.locator("[data-queue-shown]")).to_contain_text("51–57 of 57")
    expect(items).to_have_count(7)
    report(
        "late", sorted(blocks)[0], "drunk"
    )  # its frame refreshes the queue: the page read is kept
    expect(room.locator("[data-queue-shown]")).to_contain_text("of 58")
    expect(room.locator("[data-queue-shown]")).to_contain_text("51–58")
    expect(top).to_have_text("(58 waiting, 1 life at risk)")
