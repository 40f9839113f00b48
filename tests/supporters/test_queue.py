"""The control room's queue during a flood: urgency first, everything waiting counted and paged,
a life at risk reportable past a flood's allowance, and a report after its incident was dealt
with opening a new item (issue 37)."""

import itertools
from datetime import timedelta

import pytest
from django.utils import timezone

from safeground.incidents.services import log_entry_set_status
from safeground.supporters.abuse import TooManyReports, refusal_words
from safeground.supporters.categories import CATEGORIES, CONDUCT, HARM, LIFE, severity
from safeground.supporters.models import Reporter, SupporterReport, TextMessage, TriageItem
from safeground.supporters.selectors import QUEUE_PAGE, RECEIVED, queue, report_status
from safeground.supporters.services import Sender, item_accept, item_merge, report_receive
from tests import factories
from tests.supporters.test_sms import SECRET, message, post

pytestmark = pytest.mark.django_db


def send(tonight, device: str, *, block: str = "S-L1", category: str = "standing", **kw):
    sender = kw.pop("sender", None) or Sender("web", f"device-{device}-abcdefghijklmn", "10.1.1.1")
    return report_receive(
        fixture=tonight.fixture, sender=sender, block=tonight.block(block), category=category, **kw
    )


def _aged(report: SupporterReport, minutes: int) -> None:
    """The report's item as if its reports had come `minutes` ago."""
    when = timezone.now() - timedelta(minutes=minutes)
    TriageItem.objects.filter(pk=report.item_id).update(first_at=when, last_at=when)


@pytest.fixture
def wide_bounds(settings):
    """A flood from one address (the ground's Wi-Fi) within its bound: the queue's order is tested,
    not the bounds."""
    settings.SAFEGROUND_LIMITS = {**settings.SAFEGROUND_LIMITS, "supporters.network": "5000/10m"}


@pytest.mark.usefixtures("wide_bounds")
def test_a_flood_with_a_medical_report_inside_it(tonight) -> None:
    # Single reports from around the ground before the flood, each older than the last.
    blocks = list(tonight.fixture.ground.blocks.values_list("code", flat=True))
    places = itertools.product(blocks, [c.code for c in CATEGORIES if c.code != "standing"])
    singles = []
    for n, (block, category) in enumerate(itertools.islice(places, QUEUE_PAGE + 10)):
        singles.append(send(tonight, f"single-{n}", block=block, category=category))
        _aged(singles[-1], minutes=60 - n % 50)
    # One stand floods the line with one complaint, and in the middle of it someone collapses.
    for n in range(60):
        send(tonight, f"flood-{n}", block="S-L1", category="standing")
    medical = send(tonight, "medical", block="S-L2", category="medical", text="man collapsed")
    for n in range(60, 120):
        send(tonight, f"flood-{n}", block="S-L1", category="standing")

    first = queue(tonight.fixture)
    assert first.items[0].pk == medical.item_id
    # Every waiting item is counted, the page's heading too, and what is not shown is paged.
    waiting = TriageItem.objects.filter(fixture=tonight.fixture, status="queued").count()
    assert waiting == len(singles) + 2  # the flood is one item
    assert first.waiting == waiting and first.pages == 2 and len(first.items) == QUEUE_PAGE
    second = queue(tonight.fixture, page=2)
    shown = [i.pk for i in first.items] + [i.pk for i in second.items]
    assert len(shown) == len(set(shown)) == waiting
    assert (second.first, second.last) == (QUEUE_PAGE + 1, waiting)
    # Severity first on every page: a life at risk, then harm, then the rest.
    ranks = [severity(i.category) for i in first.items + second.items]
    assert ranks == sorted(ranks)
    assert first.by_severity[LIFE] == ranks.count(LIFE) >= 2  # the medical and older ones
    # The flood's item is raised within its severity by its size, never above a harm report.
    flood = TriageItem.objects.get(fixture=tonight.fixture, block__code="S-L1", category="standing")
    assert flood.count == 120
    conduct = [i.pk for i in first.items + second.items if severity(i.category) == CONDUCT]
    assert conduct[0] == flood.pk
    assert ranks.index(CONDUCT) > ranks.index(HARM)


def test_a_groups_size_raises_it_within_its_severity_and_a_new_report_is_on_top(
    tonight, wide_bounds
) -> None:
    older_harm = send(tonight, "harm", block="N-L1", category="violence")
    _aged(older_harm, minutes=20)
    for n in range(64):
        flood = send(tonight, f"flood-{n}", block="S-L1", category="standing")
    now = timezone.now()  # the flood began 10 minutes ago, its last report a minute ago
    TriageItem.objects.filter(pk=flood.item_id).update(
        first_at=now - timedelta(minutes=10), last_at=now - timedelta(minutes=1)
    )
    five = send(tonight, "five", block="N-L2", category="drunk")
    _aged(five, minutes=5)
    three = send(tonight, "three", block="S-L3", category="smoking")
    _aged(three, minutes=3)
    new = send(tonight, "new", block="S-L2", category="other")
    order = [i.pk for i in queue(tonight.fixture).items]
    # 64 reports: six doublings, raised six minutes from its beginning (four minutes ago).
    assert order == [
        older_harm.item_id, new.item_id, three.item_id, flood.item_id, five.item_id,
    ]  # fmt: skip


def test_a_phone_past_its_allowance_can_still_report_a_life_at_risk(tonight, settings) -> None:
    settings.SAFEGROUND_LIMITS = {
        **settings.SAFEGROUND_LIMITS,
        "supporters.reporter": "3/10m",
        "supporters.reporter_urgent": "5/10m",
    }
    phone = Sender("web", "one-phone-in-the-flood-abcdefg", "10.2.2.2")
    for _ in range(3):
        send(tonight, "", sender=phone)
    with pytest.raises(TooManyReports) as refused:
        send(tonight, "", sender=phone, category="smoking")
    words = refusal_words(refused.value)
    assert "You have sent 3 reports in 10 minutes and the control room has them" in words
    assert "If someone needs medical help or there is a crush, report it now" in words
    assert send(tonight, "", sender=phone, category="medical").item.category == "medical"
    assert send(tonight, "", sender=phone, category="crowding", block="S-L2").pk
    # The most severe categories' own bound: much higher, and a bound still.
    with pytest.raises(TooManyReports) as urgent:
        send(tonight, "", sender=phone, category="medical")
    assert urgent.value.urgent and urgent.value.status == 429
    assert "Tell the nearest steward now, or call 999" in refusal_words(urgent.value)
    assert SupporterReport.objects.filter(reporter__key=phone.key).count() == 5


def test_a_network_past_its_bound_is_not_told_the_control_room_has_its_reports(
    tonight, settings
) -> None:
    settings.SAFEGROUND_LIMITS = {**settings.SAFEGROUND_LIMITS, "supporters.network": "2/10m"}
    send(tonight, "a")
    send(tonight, "b")
    with pytest.raises(TooManyReports) as refused:
        send(tonight, "c")  # a phone that sent nothing yet, behind the same address
    words = refusal_words(refused.value)
    assert "control room has them" not in words and "from your network" in words
    assert send(tonight, "c", category="medical").category == "medical"


def test_a_report_after_its_incident_was_resolved_opens_a_new_item(
    tonight, django_capture_on_commit_callbacks
) -> None:
    loggist = tonight.cast["loggist"]
    first = send(tonight, "first", category="abuse-racist")
    item = item_accept(fixture=tonight.fixture, item_id=first.item_id, by=loggist)
    assert item.log_entry is not None
    # While the incident is being dealt with, more of the same joins it: the log has it.
    assert send(tonight, "during", category="abuse-racist").item_id == item.pk
    assert queue(tonight.fixture).waiting == 0
    with django_capture_on_commit_callbacks(execute=True):
        log_entry_set_status(entry=item.log_entry, author=loggist, status="resolved")
    late = send(tonight, "late", category="abuse-racist", text="he is back")
    assert late.item_id != item.pk
    assert report_status(late) == RECEIVED
    now = queue(tonight.fixture)
    assert now.waiting == 1 and now.items[0].pk == late.item_id
    assert TriageItem.objects.get(pk=item.pk).count == 2  # the resolved item kept its own


def test_a_report_after_its_item_was_merged_into_a_resolved_incident_opens_a_new_item(
    tonight,
) -> None:
    logged = factories.report(tonight.fixture, category="chanting-racist")
    log_entry_set_status(entry=logged, author=tonight.cast["loggist"], status="resolved")
    report = send(tonight, "one", category="abuse-racist")
    item_merge(fixture=tonight.fixture, item_id=report.item_id, by=tonight.cast["loggist"],
               seq=logged.seq)  # fmt: skip
    late = send(tonight, "two", category="abuse-racist")
    assert late.item_id != report.item_id and report_status(late) == RECEIVED


def test_a_late_text_opens_a_new_item_and_its_promised_text_comes(
    tonight, settings, django_capture_on_commit_callbacks
) -> None:
    settings.SAFEGROUND_SUPPORTERS_SMS_SECRET = SECRET
    ground, loggist = tonight.fixture.ground.code, tonight.cast["loggist"]
    post(ground, message("RACISM block S-L1 row C seat 3 red hat"))
    first = SupporterReport.objects.get()
    with django_capture_on_commit_callbacks(execute=True):
        item = item_accept(fixture=tonight.fixture, item_id=first.item_id, by=loggist)
    assert item.log_entry is not None
    with django_capture_on_commit_callbacks(execute=True):
        log_entry_set_status(entry=item.log_entry, author=loggist, status="resolved")
    answer = post(ground, message("RACISM block S-L1 row C seat 3 he is back")).json()
    late = SupporterReport.objects.get(reference=answer["reference"])
    assert late.item_id != item.pk and late.item.status == TriageItem.Status.QUEUED
    assert "is with the control room" in answer["reply"]
    # What the reply promised: a text when it is dealt with.
    with django_capture_on_commit_callbacks(execute=True):
        again = item_accept(fixture=tonight.fixture, item_id=late.item_id, by=loggist)
    assert again.log_entry is not None
    with django_capture_on_commit_callbacks(execute=True):
        log_entry_set_status(entry=again.log_entry, author=loggist, status="resolved")
    phone = Reporter.objects.get(phone="+447700900001")
    last = TextMessage.objects.filter(reporter=phone).order_by("sent_at", "pk").last()
    assert last is not None and late.reference in last.body and "dealt with" in last.body


@pytest.mark.usefixtures("wide_bounds")
def test_the_panel_counts_everything_waiting_and_pages_the_rest(tonight, client_for) -> None:
    from django.urls import reverse

    blocks = list(tonight.fixture.ground.blocks.values_list("code", flat=True))
    places = itertools.product(blocks, [c.code for c in CATEGORIES if c.severity != LIFE])
    for n, (block, category) in enumerate(itertools.islice(places, QUEUE_PAGE + 3)):
        send(tonight, f"panel-{n}", block=block, category=category)
    medical = send(tonight, "medical", block="S-L2", category="medical")
    waiting = QUEUE_PAGE + 4
    loggist = client_for("loggist")
    url = reverse("supporters_panel", args=[tonight.fixture.pk])
    html = loggist.get(url).content.decode()
    assert f"{waiting} waiting, 1 life at risk" in html  # the control room's top count
    assert f'data-queue-count="{waiting}"' in html
    assert html.count("data-item=") == QUEUE_PAGE
    assert html.split('data-item="')[1].startswith(f'{medical.item_id}"')  # first in the queue
    assert f"1–{QUEUE_PAGE} of {waiting}" in html
    second = loggist.get(url, {"page": "2"}).content.decode()
    assert second.count("data-item=") == 4 and f"{QUEUE_PAGE + 1}–{waiting} of {waiting}" in second
    # A decision taken on page 2 answers page 2.
    item_id = int(second.split('data-item="')[1].split('"')[0])
    action = reverse("supporters_item_action", args=[tonight.fixture.pk, item_id, "dismiss"])
    after = loggist.post(action, {"reason": "seen on CCTV: nothing", "page": "2"}).content.decode()
    assert after.count("data-item=") == 3 and 'data-page="2"' in after
    # Not a page: a clear refusal, and nothing decided.
    refused = loggist.get(url, {"page": "two"})
    assert refused.status_code == 400 and "page" in refused.content.decode()
    other = int(after.split('data-item="')[1].split('"')[0])
    action = reverse("supporters_item_action", args=[tonight.fixture.pk, other, "dismiss"])
    assert loggist.post(action, {"reason": "x", "page": "-1"}).status_code == 400
    assert TriageItem.objects.get(pk=other).status == TriageItem.Status.QUEUED


def test_the_screens_read_one_copy_until_the_queue_changes(tonight, client_for, settings) -> None:
    """Twenty control-room screens read the fragment after every frame: the first renders it,
    the others read its copy, until anything it shows changes."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext
    from django.urls import reverse

    settings.SAFEGROUND_LOG_CACHE_SECONDS = 60.0
    send(tonight, "one", category="drunk")
    loggist = client_for("loggist")
    url = reverse("supporters_panel", args=[tonight.fixture.pk])
    with CaptureQueriesContext(connection) as rendered:
        first = loggist.get(url)
    with CaptureQueriesContext(connection) as copied:
        second = loggist.get(url)
    assert second.content == first.content and len(copied) < len(rendered) - 3
    assert second["Server-Timing"].startswith("cpu;dur=")
    # A report joining, a new item, a decision: each shows at the next read.
    send(tonight, "two", category="drunk")
    assert 'data-item-count="2"' in loggist.get(url).content.decode()
    medical = send(tonight, "three", category="medical", block="S-L2")
    assert "2 waiting, 1 life at risk" in loggist.get(url).content.decode()
    item_accept(fixture=tonight.fixture, item_id=medical.item_id, by=tonight.cast["loggist"])
    after = loggist.get(url).content.decode()
    assert "1 waiting" in after and f'data-decided="{medical.item_id}"' in after


def test_a_screen_given_the_copy_from_before_a_change_is_told_when_to_read_again(
    tonight, client_for, settings
) -> None:
    """During a flood the copy is made at most once a gap: a read within the gap after a change
    is answered at once with the copy from before it and the milliseconds left of the gap (the
    page reads again then); reading again after that shows the change."""
    import time

    from django.urls import reverse

    from safeground.supporters.triage_views import READ_AGAIN_HEADER, _copies

    settings.SAFEGROUND_LOG_CACHE_SECONDS = 60.0
    settings.SAFEGROUND_SUPPORTERS_QUEUE_GAP_SECONDS = 2.0
    _copies.clear()  # another test's copy of a match with the same id
    send(tonight, "one", category="drunk")
    loggist = client_for("loggist")
    url = reverse("supporters_panel", args=[tonight.fixture.pk])
    first = loggist.get(url)
    assert READ_AGAIN_HEADER not in first
    send(tonight, "two", category="drunk")
    started = time.monotonic()
    older = loggist.get(url)
    assert time.monotonic() - started < 1.0  # not held until the gap has passed
    assert older.content == first.content
    assert 0 < int(older[READ_AGAIN_HEADER]) <= 2000
    time.sleep(int(older[READ_AGAIN_HEADER]) / 1000)
    again = loggist.get(url)
    assert READ_AGAIN_HEADER not in again
    assert 'data-item-count="2"' in again.content.decode()
