"""The seat page, the status page, the control room's queue fragment and its actions, the QR
sheets and the subject-access export, through the views."""

import json

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from safeground.bans.models import AccessRecord
from safeground.supporters.models import SupporterReport, TriageItem
from safeground.supporters.seats import Seat, seat_at, seat_code
from tests import factories

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("no_second_factor")]


def png() -> bytes:
    import io

    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (4, 4), "blue").save(out, format="PNG")
    return out.getvalue()


def seat_url(tonight, block="S-L1", row="A", number=1) -> str:
    return reverse("supporters_seat", args=[seat_code(tonight.block(block), row, number)])


def test_every_seat_has_a_short_code_that_finds_it_again(tonight) -> None:
    block = tonight.block("S-L1")
    code = seat_code(block, "J", 20)
    assert len(code) <= 12 and code.endswith("J-20") and code[:6].isalnum()
    assert seat_at(code) == Seat(block, "J", 20)
    assert seat_at(code.lower()) == Seat(block, "J", 20)
    assert seat_at("!!") is None and seat_at("U") is None and seat_at("") is None
    # A seat past the row's last (seat 21 of 20), or a row the block has not, finds nothing.
    assert seat_at(code.replace("J-20", "J-21")) is None
    assert seat_at(code.replace("J-20", "ZZ-1")) is None


def test_a_seat_code_names_no_database_id_and_survives_the_ground_imported_again(
    tonight, settings
) -> None:
    """The block's part is drawn at random and kept by the ground's and block's codes: a venue
    file imported again (the block a new row, a new id) keeps the codes printed on the seats."""
    from safeground.supporters.models import BlockSeatCodes
    from safeground.venues.models import Block

    settings.SAFEGROUND_LOG_CACHE_SECONDS = 0
    block, next_block = tonight.block("S-L1"), tonight.block("S-L2")
    code = seat_code(block, "A", 1)
    kept = BlockSeatCodes.objects.get(ground_code=block.ground.code, block_code="S-L1")
    assert code.startswith(kept.code) and kept.code != seat_code(next_block, "A", 1)[:6]
    Block.objects.filter(pk=block.pk).update(code="S-L1-before")
    imported = Block.objects.create(
        ground=block.ground,
        tier=block.tier,
        code="S-L1",
        rows=block.rows,
        first_seat=block.first_seat,
        seats_per_row=block.seats_per_row,
        capacity=block.capacity,
    )
    assert imported.pk != block.pk
    assert seat_at(code) == Seat(imported, "A", 1)
    assert seat_code(imported, "A", 1) == code


def id_code(block, row: str, number: int) -> str:
    """A seat's code of the first kind: its block by database id."""
    from safeground.supporters.seats import ALPHABET, MAX_ROWS, MAX_SEATS

    value, digits = (block.pk * MAX_ROWS + block.rows.index(row)) * MAX_SEATS + number, ""
    while value:
        value, digit = divmod(value, 32)
        digits = ALPHABET[digit] + digits
    return digits


def test_an_old_code_by_block_id_goes_on_to_the_seats_code_until_switched_off(
    tonight, settings
) -> None:
    block = tonight.block("S-L1")
    old = reverse("supporters_seat", args=[id_code(block, "A", 1)])
    response = Client().get(old)
    assert response.status_code == 302 and response["Location"] == seat_url(tonight)
    settings.SAFEGROUND_SUPPORTERS_ID_SEAT_CODES = False
    assert Client().get(old).status_code == 404


def test_the_seat_page_is_small_has_no_script_and_shows_the_seat(tonight) -> None:
    response = Client().get(seat_url(tonight))
    assert response.status_code == 200
    html = response.content.decode()
    assert len(response.content) < 60 * 1024
    assert "<script" not in html
    assert "block S-L1, row A, seat 1" in html and "Racist abuse" in html
    assert "sg_reporter" in response.cookies and response.cookies["sg_reporter"]["httponly"]


def test_with_no_match_on_the_page_says_so_and_takes_nothing(match_day) -> None:
    block = match_day.ground.blocks.get(code="S-L1")
    url = reverse("supporters_seat", args=[seat_code(block, "A", 1)])
    assert "no match on" in Client().get(url).content.decode()
    response = Client().post(url, {"category": "other"})
    assert response.status_code == 409 and SupporterReport.objects.count() == 0


def test_an_unknown_code_is_a_404() -> None:
    assert Client().get("/s/ZZZZZZZZ/").status_code == 404


def test_a_report_sent_goes_to_its_status_page(tonight) -> None:
    client = Client()
    client.get(seat_url(tonight))
    response = client.post(
        seat_url(tonight), {"category": "abuse-racist", "text": "<script>x</script>"}
    )
    report = SupporterReport.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("supporters_status", args=[report.reference])
    assert (report.block.code, report.row, report.seat) == ("S-L1", "A", "1")
    assert report.contact == "" and report.reporter.phone == ""  # anonymous by default
    page = client.get(response["Location"]).content.decode()
    assert report.reference in page and "Received" in page


def test_over_the_bound_the_page_answers_429_saying_when(tonight, settings) -> None:
    settings.SAFEGROUND_LIMITS = {**settings.SAFEGROUND_LIMITS, "supporters.reporter": "1/10m"}
    client = Client()
    client.get(seat_url(tonight))
    client.post(seat_url(tonight), {"category": "smoking"})
    response = client.post(seat_url(tonight), {"category": "smoking"})
    assert response.status_code == 429 and int(response["Retry-After"]) > 0
    assert "You can send another in about" in response.content.decode()


def test_bad_input_is_a_400_with_words_a_supporter_reads(tonight) -> None:
    response = Client().post(seat_url(tonight), {"category": "nonsense"})
    assert (
        response.status_code == 400 and "Choose what you are reporting" in response.content.decode()
    )


def test_the_queue_escapes_supporters_words(tonight, client_for) -> None:
    Client().post(seat_url(tonight), {"category": "drunk", "text": "<img src=x onerror=alert(1)>"})
    html = (
        client_for("loggist")
        .get(reverse("supporters_panel", args=[tonight.fixture.pk]))
        .content.decode()
    )
    assert "<img src=x" not in html and "&lt;img src=x" in html
    assert 'data-supporter-blocks="S-L1"' in html


def test_the_loggist_accepts_and_tasks_from_the_queue(tonight, client_for) -> None:
    Client().post(seat_url(tonight), {"category": "abuse-racist"})
    item = TriageItem.objects.get()
    loggist = client_for("loggist")
    url = reverse("supporters_item_action", args=[tonight.fixture.pk, item.pk, "accept"])
    html = loggist.post(url, {"task": "1"}).content.decode()
    item.refresh_from_db()
    assert item.status == "accepted" and item.tasked_at is not None
    assert "steward tasked" in html


def test_a_refused_action_is_shown_in_the_fragment(tonight, client_for) -> None:
    Client().post(seat_url(tonight), {"category": "abuse-racist"})
    item = TriageItem.objects.get()
    url = reverse("supporters_item_action", args=[tonight.fixture.pk, item.pk, "dismiss"])
    html = client_for("loggist").post(url, {"reason": ""}).content.decode()
    assert "say why" in html
    url = reverse("supporters_item_action", args=[tonight.fixture.pk, item.pk, "merge"])
    assert "incident" in client_for("loggist").post(url, {"seq": "abc"}).content.decode()


def test_reading_a_contact_is_recorded(tonight, client_for) -> None:
    Client().post(seat_url(tonight), {"category": "medical", "contact": "07700 900123"})
    report = SupporterReport.objects.get()
    url = reverse("supporters_contact", args=[tonight.fixture.pk, report.pk])
    assert client_for("loggist").get(url).content.decode() == "07700 900123"
    record = AccessRecord.objects.get()
    assert (record.user.username, record.action, record.subject) == (
        "loggist", "read_contact", f"report {report.reference}",
    )  # fmt: skip
    assert record.organisation == tonight.cast.home  # the home club's data, on its auditor's page


def test_a_blocks_qr_sheet_is_a_pdf(tonight, client_for) -> None:
    url = reverse("supporters_seat_sheet", args=[tonight.fixture.ground.code, "S-L1"])
    response = client_for("safety").get(url)
    assert response.status_code == 200 and response.content.startswith(b"%PDF")


def test_subject_access_for_a_phone_needs_a_reason_and_is_recorded(tonight, client_for) -> None:
    from safeground.supporters.services import Sender, report_receive

    report_receive(
        fixture=tonight.fixture,
        sender=Sender("sms", "+447700900123"),
        block=tonight.block("S-L2"),
        category="violence",
        text="fight at the front",
    )
    url = reverse("supporters_subject_access")
    client = client_for("banofficer")  # the register's exporter (can_export_subject_access)
    assert client.post(url, {"phone": "+447700900123"}).status_code == 400
    response = client.post(url, {"phone": "+447700900123", "reason": "request by email 3 Dec"})
    export = json.loads(response.content)
    assert export["phone"] == "+447700900123"
    assert [r["text"] for r in export["reports"]] == ["fight at the front"]
    assert AccessRecord.objects.filter(action="subject_access_phone").count() == 1


def test_retention_erases_contacts_photos_and_phones_and_keeps_the_counts(tonight) -> None:
    from datetime import timedelta

    from safeground.privacy.services import retention_apply
    from safeground.supporters.models import Reporter
    from safeground.supporters.services import Sender, report_receive

    report = report_receive(
        fixture=tonight.fixture,
        sender=Sender("sms", "+447700900999"),
        block=tonight.block("S-L2"),
        category="violence",
        contact="call me",
        photo=factories.upload("p.png", png()),
    )
    later = timezone.localdate() + timedelta(days=400)
    result = retention_apply(today=later)
    assert any("supporters" in step.what and step.erased >= 2 for step in result.steps)
    report.refresh_from_db()
    assert (report.contact, report.network, bool(report.photo)) == ("", "", False)
    assert report.photo_sha256 and report.erased_at is not None
    assert Reporter.objects.get(pk=report.reporter_id).phone == ""
    assert TriageItem.objects.get().count == 1


def test_the_queue_reads_in_a_fixed_number_of_queries(
    tonight, client_for, settings, django_assert_max_num_queries
) -> None:
    """However many items and reports: the control room fetches it after every frame."""
    settings.SAFEGROUND_LIMITS = {**settings.SAFEGROUND_LIMITS, "supporters.network": "1000/10m"}
    from safeground.supporters.services import Sender, report_receive

    for n, block in enumerate(["S-L1", "S-L2", "S-L3", "N-L1", "N-L2", "N-L3"] * 4):
        report_receive(
            fixture=tonight.fixture,
            sender=Sender("web", f"budget-{n}-abcdefghijkl"),
            block=tonight.block(block),
            category=["drunk", "smoking"][n // 6 % 2],
        )
    client = client_for("loggist")
    url = reverse("supporters_panel", args=[tonight.fixture.pk])
    with django_assert_max_num_queries(20):
        response = client.get(url)
    assert response.content.decode().count("data-item=") == 12


def test_the_seat_page_has_a_language_switch_and_speaks_welsh_once_chosen(tonight) -> None:
    client = Client()
    html = client.get(seat_url(tonight)).content.decode()
    assert "data-language-switch" in html and 'data-language="cy"' in html and ">Cymraeg<" in html
    chosen = client.post("/i18n/setlang/", {"language": "cy", "next": seat_url(tonight)})
    assert chosen.status_code == 302 and chosen["Location"] == seat_url(tonight)
    welsh = client.get(seat_url(tonight)).content.decode()
    assert '<html lang="cy">' in welsh and 'data-language="en-gb"' in welsh
