"""The seats' label sheets: a block's PDF read back (its QR codes decoded to their seats, the
seat's words beside each code), the ground page's panel, and the whole ground's zip made in the
background."""

import io
import zipfile

import pytest
from django.urls import reverse
from django.utils import timezone

from safeground import background
from safeground.supporters.models import SeatLabelsJob
from safeground.supporters.seat_sheets import ground_labels_ask
from safeground.supporters.seats import seat_at
from safeground.venues.models import Block

from .seat_labels import page_text, pages, read_page

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("no_second_factor")]


def test_a_blocks_sheet_reads_back_seat_by_seat(match_day, client_for) -> None:
    ground = match_day.ground
    block = Block.objects.get(ground=ground, code="S-L1")  # rows A-J, 20 seats a row
    url = reverse("supporters_seat_sheet", args=[ground.code, "S-L1"])
    response = client_for("safety").get(url)
    assert response.status_code == 200 and response["Content-Type"] == "application/pdf"
    assert 'filename="seats-' in response["Content-Disposition"]
    pdf = response.content
    assert pages(pdf) == 10  # 200 seats, 21 a page
    # The heading names the block, its stand and tier, and the ground, on every page.
    heading = f"Block S-L1, South Stand, Lower tier, {ground.name}: one label per seat"
    assert heading in page_text(pdf, 0) and heading in page_text(pdf, 9)
    # The first page is not blank: its 21 codes read, each back to its seat, whose row and
    # number are printed beside it (not under it), with the address the code holds.
    first = read_page(pdf, 0)
    assert len(first) == 21
    seats = []
    for label in first:
        assert label.url.startswith("http://testserver/s/")
        seat = seat_at(label.url.removeprefix("http://testserver/s/").rstrip("/"))
        assert seat is not None and seat.block == block
        assert f"Block S-L1 Row {seat.row} · Seat {seat.number}" in label.beside
        assert "See something? Report it from your seat:" in label.beside
        assert label.url.removeprefix("http://testserver") in label.beside
        seats.append((seat.row, seat.number))
    assert sorted(seats) == [("A", n) for n in range(1, 21)] + [("B", 1)]
    # The last page: the last seat, and no more labels than seats.
    last = read_page(pdf, 9)
    assert len(last) == 200 - 9 * 21
    assert any(label.url.endswith("J-20/") for label in last)


def test_a_sheet_of_a_block_or_ground_not_there_is_a_404(match_day, client_for) -> None:
    client = client_for("safety")
    url = reverse("supporters_seat_sheet", args=[match_day.ground.code, "Z-9"])
    assert client.get(url).status_code == 404
    assert client.get(reverse("supporters_seat_sheet", args=["nowhere", "S-L1"])).status_code == 404


def test_the_ground_page_links_every_blocks_sheet_for_whoever_may_print(
    match_day, client_for
) -> None:
    ground = match_day.ground
    page = client_for("safety").get(reverse("ground", args=[ground.code])).content.decode()
    panel_url = reverse("supporters_seat_labels", args=[ground.code])
    assert f'hx-get="{panel_url}"' in page
    panel = client_for("safety").get(panel_url).content.decode()
    for block in Block.objects.filter(ground=ground):
        assert reverse("supporters_seat_sheet", args=[ground.code, block.code]) in panel
    # The auditor sees the ground but may not print its seat codes: no panel.
    auditor_page = client_for("auditor").get(reverse("ground", args=[ground.code]))
    assert auditor_page.status_code == 200 and panel_url not in auditor_page.content.decode()


@pytest.mark.django_db(transaction=True)  # the job runs on a background thread, after commit
def test_the_whole_grounds_labels_are_made_in_the_background_then_downloaded(
    match_day, client_for
) -> None:
    ground = match_day.ground
    client = client_for("safety")
    panel_url = reverse("supporters_seat_labels", args=[ground.code])
    response = client.post(panel_url, headers={"HX-Request": "true"})
    assert response.status_code == 200
    job = SeatLabelsJob.objects.get()
    assert job.asked_by is not None and job.asked_by.username == "safety"
    assert (job.ground, job.site) == (ground, "http://testserver")
    assert background.settle(120)
    job.refresh_from_db()
    blocks = list(Block.objects.filter(ground=ground).order_by("code"))
    assert job.finished_at is not None and job.failed == ""
    assert job.blocks_done == job.blocks_total == len(blocks)
    panel = client.get(panel_url).content.decode()
    download = reverse("supporters_seat_labels_download", args=[ground.code, job.pk])
    assert download in panel and 'hx-trigger="every 1s"' not in panel
    archive = zipfile.ZipFile(io.BytesIO(b"".join(client.get(download).streaming_content)))
    names = sorted(archive.namelist())
    assert names == sorted(f"seats-{ground.code}-{block.code}.pdf" for block in blocks)
    # Each block's sheet in it reads back to that block's seats.
    sheet = archive.read(f"seats-{ground.code}-N-L1.pdf")
    seats = [seat_at(label.url.split("/s/")[1].rstrip("/")) for label in read_page(sheet, 0)]
    assert len(seats) == 21 and {seat.block.code for seat in seats if seat} == {"N-L1"}
    assert None not in seats
    # Others are refused the file.
    assert client_for("auditor").get(download).status_code == 403


def test_asking_again_while_the_ground_is_being_made_shows_the_job_under_way(
    match_day, cast
) -> None:
    ground = match_day.ground
    under_way = SeatLabelsJob.objects.create(
        ground=ground, asked_at=timezone.now(), site="https://x.test", blocks_total=8
    )
    again = ground_labels_ask(ground=ground, asked_by=cast["safety"], site="https://x.test")
    assert again == under_way and SeatLabelsJob.objects.count() == 1


def test_a_panel_shows_progress_while_the_job_runs(match_day, client_for) -> None:
    ground = match_day.ground
    SeatLabelsJob.objects.create(
        ground=ground, asked_at=timezone.now(), site="https://x.test", blocks_total=8,
        blocks_done=3,
    )  # fmt: skip
    panel = client_for("safety").get(reverse("supporters_seat_labels", args=[ground.code]))
    text = panel.content.decode()
    assert "3 of 8 blocks made" in text and 'value="3"' in text and "every 1s" in text
