"""Supporters' reports into the queue, never the log; grouping, bounds, trust, the decisions."""

from datetime import timedelta

import pytest
from django.utils import timezone, translation
from PIL import Image

from safeground.incidents.models import LogEntry
from safeground.incidents.services import log_entry_set_status
from safeground.live import catalogue
from safeground.live.events import capture_events
from safeground.supporters.abuse import TooManyReports
from safeground.supporters.models import Reporter, SupporterReport, TriageItem
from safeground.supporters.photos import PhotoRefused
from safeground.supporters.selectors import (
    BEING_DEALT_WITH,
    DEALT_WITH,
    RECEIVED,
    nearest_steward,
    queue,
    report_status,
)
from safeground.supporters.services import (
    Sender,
    SupporterReportError,
    item_accept,
    item_dismiss,
    item_merge,
    item_task,
    report_receive,
)
from tests import factories

pytestmark = pytest.mark.django_db


def send(tonight, n: int = 0, *, block: str = "S-L1", category: str = "abuse-racist", **kw):
    sender = kw.pop("sender", None) or Sender("web", f"device-token-{n:04d}-abcdefghij", "10.0.0.1")
    return report_receive(
        fixture=tonight.fixture, sender=sender, block=tonight.block(block), category=category, **kw
    )


def test_a_report_waits_in_the_queue_and_not_in_the_log(tonight) -> None:
    before = LogEntry.objects.filter(fixture=tonight.fixture).count()
    report = send(tonight, row="A", seat="1", text="Monkey chants from row C")
    assert report.reference.startswith("SR") and len(report.reference) == 10
    assert [i.pk for i in queue(tonight.fixture).items] == [report.item_id]
    assert LogEntry.objects.filter(fixture=tonight.fixture).count() == before
    assert report_status(report) == RECEIVED


def test_same_block_and_category_within_minutes_group_into_one_item_with_a_count(tonight) -> None:
    first = send(tonight, 1)
    second = send(tonight, 2, row="A", seat="2")
    other_kind = send(tonight, 3, category="smoking")
    other_block = send(tonight, 4, block="S-L2")
    assert first.item_id == second.item_id
    assert TriageItem.objects.get(pk=first.item_id).count == 2
    assert len({first.item_id, other_kind.item_id, other_block.item_id}) == 3


def test_an_item_gone_quiet_is_not_joined(tonight, settings) -> None:
    first = send(tonight, 1)
    TriageItem.objects.filter(pk=first.item_id).update(
        last_at=timezone.now() - timedelta(minutes=settings.SAFEGROUND_SUPPORTERS_GROUP_MINUTES + 1)
    )
    assert send(tonight, 2).item_id != first.item_id


def test_a_flood_from_one_stand_is_one_group_and_a_handful_of_frames(
    tonight, settings, django_capture_on_commit_callbacks
) -> None:
    settings.SAFEGROUND_LIMITS = {**settings.SAFEGROUND_LIMITS, "supporters.network": "1000/10m"}
    with capture_events() as events, django_capture_on_commit_callbacks(execute=True):
        for n in range(200):
            send(tonight, n)
    assert TriageItem.objects.filter(fixture=tonight.fixture).count() == 1
    assert TriageItem.objects.get().count == 200
    frames = [e for e in events if e.type == catalogue.SUPPORTERS_ITEM]
    assert 1 <= len(frames) <= 12  # new, 2, 3, 4, 8, 16, 32, 64, 128, 100, 200
    assert frames[-1].data["count"] == 200 and frames[-1].audience.home_only


def test_a_device_over_its_bound_is_refused_with_when_to_try_again(tonight, settings) -> None:
    settings.SAFEGROUND_LIMITS = {**settings.SAFEGROUND_LIMITS, "supporters.reporter": "3/10m"}
    same = Sender("web", "one-device-token-abcdefghijkl", "10.0.0.2")
    for _ in range(3):
        send(tonight, sender=same)
    with pytest.raises(TooManyReports) as refused:
        send(tonight, sender=same)
    assert refused.value.status == 429 and 1 <= refused.value.retry_after <= 601
    assert refused.value.field == "reporter"


def test_a_network_address_over_its_bound_is_refused(tonight, settings) -> None:
    settings.SAFEGROUND_LIMITS = {**settings.SAFEGROUND_LIMITS, "supporters.network": "2/10m"}
    send(tonight, 1)
    send(tonight, 2)
    with pytest.raises(TooManyReports) as refused:
        send(tonight, 3)
    assert refused.value.field == "network"
    # Another address is not held back by it.
    send(tonight, 4, sender=Sender("web", "device-token-0004-abcdefghij", "10.9.9.9"))


def test_an_address_is_counted_up_to_its_bound_and_each_address_apart(tonight, settings) -> None:
    """What decides a refusal is read, and no more: a flood's thousands of reports from one
    address are not counted again at every batch (nor up to the higher bound of a life at risk
    unless the batch holds such a report)."""
    from safeground.supporters import queue_rows

    settings.SAFEGROUND_LIMITS = {**settings.SAFEGROUND_LIMITS, "supporters.network": "1000/10m"}
    for n in range(5):
        send(tonight, n)
    other = Sender("web", "device-token-0099-abcdefghij", "10.9.9.9")
    send(tonight, 99, sender=other)
    networks = sorted(set(SupporterReport.objects.values_list("network", flat=True)))
    settings.SAFEGROUND_LIMITS = {
        **settings.SAFEGROUND_LIMITS,
        "supporters.network": "3/10m",
        "supporters.network_urgent": "4/10m",
    }
    _known, counts = queue_rows.reporters_and_sent(
        keys=["no-such-device"], networks=networks, urgent_networks=networks[:1],
        now=timezone.now(),
    )  # fmt: skip
    assert sorted(counts["network"].values()) == [1, 3]
    assert len(counts["network_urgent"]) == 1 and set(counts["network_urgent"].values()) <= {1, 4}


def test_a_row_the_block_does_not_have_stays_in_the_words(tonight) -> None:
    report = send(tonight, row="ZZ", text="by the stairs")
    assert (report.row, report.text) == ("", "by the stairs (row ZZ?)")


def test_bad_input_names_what_is_wrong(tonight) -> None:
    with pytest.raises(SupporterReportError, match="category"):
        send(tonight, category="shouting")
    with pytest.raises(SupporterReportError, match="text"):
        send(tonight, text="x" * 1001)
    other = factories.ground(code="elsewhere-park")
    with pytest.raises(SupporterReportError, match="block"):
        report_receive(
            fixture=tonight.fixture,
            sender=Sender("web", "device-token-x-abcdefghijkl"),
            block=other.blocks.first(),
            category="other",
        )


def _jpeg_with_gps() -> bytes:
    import io

    image = Image.new("RGB", (8, 8), "red")
    exif = Image.Exif()
    exif[0x010F] = "PhoneMaker"  # Make
    exif[0x8825] = {1: "N", 2: (51.0, 32.0, 19.0)}  # GPS: latitude
    out = io.BytesIO()
    image.save(out, format="JPEG", exif=exif)
    return out.getvalue()


def test_a_photo_is_kept_without_its_location_and_with_its_sha256(tonight) -> None:
    import hashlib

    original = _jpeg_with_gps()
    assert Image.open(__import__("io").BytesIO(original)).getexif()  # it had metadata
    report = send(tonight, photo=factories.upload("p.jpg", original, "image/jpeg"))
    kept = report.photo.read()
    assert hashlib.sha256(kept).hexdigest() == report.photo_sha256
    assert report.photo_type == "image/jpeg"
    assert not Image.open(__import__("io").BytesIO(kept)).getexif()


def test_a_photo_not_an_image_is_refused(tonight) -> None:
    with pytest.raises(PhotoRefused):
        send(tonight, photo=factories.upload("p.jpg", b"not an image", "image/jpeg"))
    with pytest.raises(PhotoRefused):
        send(tonight, photo=factories.upload("p.gif", b"GIF89a", "image/gif"))
    assert SupporterReport.objects.count() == 0


def test_a_photos_refusal_is_in_the_supporters_language(tonight) -> None:
    with translation.override("cy"), pytest.raises(PhotoRefused) as unreadable:
        send(tonight, photo=factories.upload("p.jpg", b"not an image", "image/jpeg"))
    not_an_image = "delwedd JPEG, PNG neu WebP: nid y ddelwedd y mae'n dweud yw'r ffeil hon"
    assert (unreadable.value.field, unreadable.value.message) == ("photo", not_an_image)
    with translation.override("cy"), pytest.raises(PhotoRefused) as gif:
        send(tonight, photo=factories.upload("p.gif", b"GIF89a", "image/gif"))
    assert gif.value.message == "delwedd JPEG, PNG neu WebP"  # the log's rule, as a log photo's


def test_accepting_appends_one_chained_entry_linked_to_the_item(tonight) -> None:
    loggist = tonight.cast["loggist"]
    report = send(tonight, row="C", seat="23", text="<b>man in red hat</b>")
    send(tonight, 2, row="C", seat="24")
    item = item_accept(fixture=tonight.fixture, item_id=report.item_id, by=loggist)
    entry = item.log_entry
    assert entry is not None and entry.kind == LogEntry.Kind.REPORT
    assert entry.category.code == "chanting-racist" and entry.block.code == "S-L1"
    assert entry.first_row == "C" and "×2" in entry.text and "man in red hat" in entry.text
    assert entry.prev_hash == LogEntry.objects.get(fixture=tonight.fixture, seq=entry.seq - 1).hash
    report.refresh_from_db()
    assert report_status(report) == BEING_DEALT_WITH
    with pytest.raises(SupporterReportError) as twice:
        item_accept(fixture=tonight.fixture, item_id=report.item_id, by=loggist)
    assert twice.value.status == 409
    # Dealt with once its incident is resolved.
    log_entry_set_status(entry=entry, author=loggist, status="resolved")
    assert report_status(report) == DEALT_WITH


def test_merging_follows_an_incident_already_logged(tonight) -> None:
    logged = factories.report(tonight.fixture, category="chanting-racist")
    report = send(tonight)
    item = item_merge(
        fixture=tonight.fixture, item_id=report.item_id, by=tonight.cast["loggist"], seq=logged.seq
    )
    assert item.status == TriageItem.Status.MERGED and item.log_entry == logged
    with pytest.raises(SupporterReportError) as missing:
        item_merge(fixture=tonight.fixture, item_id=send(tonight, 5, category="drunk").item_id,
                   by=tonight.cast["loggist"], seq=9999)  # fmt: skip
    assert missing.value.status == 404


def test_dismissing_needs_a_reason_and_lowers_trust_accepting_raises_it(tonight) -> None:
    loggist = tonight.cast["loggist"]
    liar = Sender("web", "liar-device-token-abcdefgh", "10.0.0.3")
    honest = Sender("web", "honest-device-token-abcdefg", "10.0.0.4")
    false = send(tonight, sender=liar, category="pyrotechnics")
    with pytest.raises(SupporterReportError, match="reason"):
        item_dismiss(fixture=tonight.fixture, item_id=false.item_id, by=loggist, reason=" ")
    item_dismiss(fixture=tonight.fixture, item_id=false.item_id, by=loggist, reason="CCTV: none")
    true = send(tonight, sender=honest, category="missile")
    item_accept(fixture=tonight.fixture, item_id=true.item_id, by=loggist)
    assert Reporter.objects.get(pk=false.reporter_id).trust < 0
    assert Reporter.objects.get(pk=true.reporter_id).trust > 0
    false.refresh_from_db()
    assert report_status(false) == DEALT_WITH
    # A dismissed item takes no more reports: the next begins a new one.
    assert send(tonight, 9, category="pyrotechnics").item_id != false.item_id


def test_a_trusted_reporters_item_is_marked_but_not_raised_above_a_newer_one(tonight) -> None:
    trusted = Sender("web", "trusted-device-token-abcde", "10.0.0.5")
    Reporter.objects.create(channel="web", key=trusted.key, trust=3)
    mine = send(tonight, sender=trusted, category="smoking", block="S-L3")
    newer = send(tonight, 1, category="standing")
    shown = queue(tonight.fixture).items
    assert [i.pk for i in shown] == [newer.item_id, mine.item_id]
    assert shown[1].trust == 3


def test_the_nearest_posted_steward_is_suggested_and_tasked(tonight) -> None:
    loggist = tonight.cast["loggist"]
    assert nearest_steward(tonight.fixture, tonight.block("S-L2").pk) == tonight.away_steward
    assert nearest_steward(tonight.fixture, tonight.block("N-L1").pk) == tonight.north_steward
    report = send(tonight, block="N-L2", category="medical")
    with pytest.raises(SupporterReportError) as early:
        item_task(fixture=tonight.fixture, item_id=report.item_id, by=loggist)
    assert early.value.status == 409
    item = item_accept(fixture=tonight.fixture, item_id=report.item_id, by=loggist)
    assert item_task(fixture=tonight.fixture, item_id=item.pk, by=loggist) == tonight.north_steward
    assignment = LogEntry.objects.get(concerns=item.log_entry, kind=LogEntry.Kind.ASSIGNMENT)
    assert assignment.assignee == tonight.north_steward


def test_the_post_match_report_counts_reports_by_category_and_time_to_the_steward(tonight) -> None:
    from datetime import timedelta

    from safeground.incidents.services import log_entry_task
    from safeground.reports.match_report import match_report

    loggist = tonight.cast["loggist"]
    racist = send(tonight, 1)
    send(tonight, 2)
    item = item_accept(fixture=tonight.fixture, item_id=racist.item_id, by=loggist)
    item_task(fixture=tonight.fixture, item_id=item.pk, by=loggist)
    TriageItem.objects.filter(pk=item.pk).update(first_at=timezone.now() - timedelta(minutes=3))
    log_entry_task(entry=item.log_entry, author=tonight.away_steward, task="accepted")
    dropped = send(tonight, 3, category="smoking", block="S-L3")
    item_dismiss(fixture=tonight.fixture, item_id=dropped.item_id, by=loggist, reason="no one")
    report = match_report(tonight.fixture, with_plan=False)
    assert report.supporters is not None and report.supporters["total"] == 3
    rows = {row["code"]: row for row in report.supporters["by_category"]}
    assert (rows["abuse-racist"]["reports"], rows["abuse-racist"]["accepted"]) == (2, 1)
    assert 2.9 <= rows["abuse-racist"]["to_steward_minutes"] <= 3.5
    assert (rows["smoking"]["dismissed"], rows["smoking"]["to_steward_minutes"]) == (1, None)
    assert match_report(tonight.fixture, home_only=False, with_plan=False).supporters is None
