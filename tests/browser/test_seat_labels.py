"""Issue 38 row 1: the safety officer follows the link from the ground page to a block's seat
labels, gets the PDF, and its QR codes read back to their seats, the seat printed beside each;
then makes every block's labels at once, watches the progress and downloads the zip."""

import io
import zipfile

import pytest
from playwright.sync_api import expect

from safeground.accounts.models import Organisation
from safeground.demo.season import HOME_ORG
from safeground.supporters.seats import seat_at
from tests import factories
from tests.supporters.seat_labels import page_text, pages, read_page

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_block_sheet_from_the_ground_page_reads_back_to_its_seats(site, new_page, log_in):
    page = log_in(new_page(), "safety")
    page.goto(f"{site}/grounds/london-stadium/")
    panel = page.locator("[data-seat-labels]")
    expect(panel).to_contain_text("Seat labels to print")
    # 850 labels: seconds on a machine of its own, more on a loaded one.
    with page.expect_download(timeout=60_000) as download:
        panel.get_by_role("link", name="N-L1", exact=True).click()
    with open(download.value.path(), "rb") as file:
        pdf = file.read()
    assert download.value.suggested_filename == "seats-london-stadium-N-L1.pdf"
    assert pages(pdf) == 41  # 25 rows of 34 seats, 21 labels a page
    assert "Block N-L1, North Stand, Lower tier, London Stadium" in page_text(pdf, 0)
    for label in read_page(pdf, 0) + read_page(pdf, 40):
        assert label.url.startswith(f"{site}/s/")
        seat = seat_at(label.url.removeprefix(f"{site}/s/").rstrip("/"))
        assert seat is not None and seat.block.code == "N-L1"
        assert f"Row {seat.row} · Seat {seat.number}" in label.beside
    assert len(read_page(pdf, 0)) == 21


def test_every_blocks_labels_at_once_with_progress_then_the_zip(site, new_page, log_in):
    # A small ground of the demo's club (7 blocks of 200 seats): the job ends within the test.
    ground = factories.ground(Organisation.objects.get(name=HOME_ORG), code="small-park")
    page = log_in(new_page(), "safety")
    page.goto(f"{site}/grounds/{ground.code}/")
    panel = page.locator("[data-seat-labels]")
    panel.get_by_role("button", name="Make every block's labels (one zip file)").click()
    link = panel.locator("[data-ground-labels-file]")
    expect(link).to_be_visible(timeout=120_000)  # the progress bar shown meanwhile, polled
    with page.expect_download() as download:
        link.click()
    with open(download.value.path(), "rb") as file:
        archive = zipfile.ZipFile(io.BytesIO(file.read()))
    assert len(archive.namelist()) == ground.blocks.count()
    sheet = archive.read(f"seats-{ground.code}-S-L2.pdf")
    labels = read_page(sheet, 0)
    assert len(labels) == 21
    for label in labels:
        seat = seat_at(label.url.removeprefix(f"{site}/s/").rstrip("/"))
        assert seat is not None and seat.block.code == "S-L2" and seat.block.ground == ground
