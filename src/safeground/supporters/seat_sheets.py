"""The seats' labels: a block's sheet (a PDF, one label per seat: its QR code with the seat and
its address beside it) and the whole ground's, made in the background as a zip of the blocks'.

A sheet took 252 s for a block of 850 seats. Two causes: each QR code was made by pure Python
(about 40 ms a code on a loaded machine, 850 codes) as an SVG for WeasyPrint to parse, and
WeasyPrint laid out 850 labels of eight lines each (still 80 s on the loaded machine as a plain
table of PNGs; 6 s for 210 labels with no words at all). A sheet of labels is the same few
shapes 850 times, not a document: it is drawn straight into a PDF here (pydyf, WeasyPrint's own
PDF writer), each QR code made by zxing-cpp (C++) as an image of one pixel a module, drawn
without smoothing, and the words in the PDF's standard fonts (Helvetica, Courier: nothing to
embed, nothing to lay out).
"""

from __future__ import annotations

import io
import tempfile
import unicodedata
import zipfile
from dataclasses import dataclass
from datetime import timedelta

import pydyf
import zxingcpp
from django.conf import settings
from django.core.files import File
from django.db import transaction
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from PIL import Image

from safeground import background
from safeground.accounts.models import User
from safeground.venues.models import Block, Ground

from .models import SeatLabelsJob
from .seats import Seat, block_seats

MM = 72 / 25.4  # PDF points a millimetre
PAGE_WIDTH, PAGE_HEIGHT = 210 * MM, 297 * MM  # A4
ACROSS, DOWN = 3, 7  # labels a page: 21
LABEL_WIDTH, LABEL_HEIGHT = 64.6 * MM, 36 * MM
LEFT, TOP = (PAGE_WIDTH - ACROSS * LABEL_WIDTH) / 2, 10 * MM
HEADING_SIZE = 10
GRID_TOP = PAGE_HEIGHT - TOP - 2.6 * HEADING_SIZE  # room for the heading's two lines
QR_SIZE = 28 * MM
WORDS_LEFT = 30.5 * MM  # from the label's left edge: the words beside the code, never under it
WORDS_WIDTH = LABEL_WIDTH - WORDS_LEFT - 1.5 * MM
# Helvetica's widest characters are about 0.6 of its size (most far less): lines measured so are
# never too long. Courier's are all 0.6.
CHARACTER_WIDTH = 0.6
FONTS = {"bold": "Helvetica-Bold", "plain": "Helvetica", "fixed": "Courier"}
# A job not finished after this belongs to a process that died: it may be asked for again.
JOB_ABANDONED_AFTER = timedelta(hours=1)


@dataclass(frozen=True)
class Label:
    seat: Seat
    site: str  # as the one printing reached it: https://host
    path: str  # the seat's own page: /s/<code>/

    @property
    def url(self) -> str:
        return self.site + self.path


def block_labels(block: Block, site: str) -> list[Label]:
    site = site.rstrip("/")
    page = reverse("supporters_seat", args=["CODE"])  # reversed once, not 850 times
    return [Label(seat, site, page.replace("CODE", seat.code)) for seat in block_seats(block)]


def sheet_heading(block: Block) -> str:
    return _("Block %(block)s, %(stand)s, %(ground)s: one label per seat") % {
        "block": block.code,
        "stand": block.tier,  # "South Stand, Lower tier"
        "ground": block.ground.name,
    }


def sheet_filename(block: Block) -> str:
    return f"seats-{block.ground.code}-{block.code}.pdf"


def block_sheet(block: Block, site: str) -> bytes:
    """A block's labels as a PDF: three across and seven down an A4 page, the heading on each."""
    labels = block_labels(block, site)
    heading = sheet_heading(block)
    pages = [labels[i : i + ACROSS * DOWN] for i in range(0, len(labels), ACROSS * DOWN)] or [[]]
    pdf = pydyf.PDF()
    pdf.info["Title"] = pydyf.String(heading)
    fonts = pydyf.Dictionary()
    for key, font in FONTS.items():
        fonts[key] = pydyf.Dictionary(
            {
                "Type": "/Font",
                "Subtype": "/Type1",
                "BaseFont": f"/{font}",
                "Encoding": "/WinAnsiEncoding",
            }
        )
        pdf.add_object(fonts[key])
        fonts[key] = fonts[key].reference
    for number, on_page in enumerate(pages, start=1):
        codes = pydyf.Dictionary()
        draw = pydyf.Stream(compress=True)
        _words(draw, GRID_TOP + 1.5 * HEADING_SIZE, LEFT, "bold", HEADING_SIZE, heading,
               width=ACROSS * LABEL_WIDTH, lines=2)  # fmt: skip
        for place, label in enumerate(on_page):
            code = _qr_image(label.url)
            pdf.add_object(code)
            codes[f"Q{place}"] = code.reference
            row, column = divmod(place, ACROSS)
            _label(draw, label, f"Q{place}", LEFT + column * LABEL_WIDTH,
                   GRID_TOP - (row + 1) * LABEL_HEIGHT)  # fmt: skip
        pages_word = _("Page %(page)s of %(pages)s") % {"page": number, "pages": len(pages)}
        _words(draw, 8 * MM, LEFT, "plain", 7, pages_word, width=ACROSS * LABEL_WIDTH)
        pdf.add_object(draw)
        page = pydyf.Dictionary(
            {
                "Type": "/Page",
                "Parent": pdf.pages.reference,
                "MediaBox": pydyf.Array([0, 0, PAGE_WIDTH, PAGE_HEIGHT]),
                "Contents": draw.reference,
                "Resources": pydyf.Dictionary({"Font": fonts, "XObject": codes}),
            }
        )
        pdf.add_page(page)
    out = io.BytesIO()
    pdf.write(out)
    return out.getvalue()


def _qr_image(url: str) -> pydyf.Stream:
    """The QR code with its quiet zone as a black-and-white image of one pixel a module, drawn
    without smoothing (Interpolate false): square, sharp modules at any size."""
    code = zxingcpp.create_barcode(url, zxingcpp.BarcodeFormat.QRCode, ec_level="M")
    modules = code.to_image(scale=1, add_quiet_zones=True)
    height, width = modules.shape
    bits = Image.frombytes("L", (width, height), bytes(modules))
    bits = bits.convert("1", dither=Image.Dither.NONE)  # 1 bit a pixel, 1 white, as PDF's gray
    return pydyf.Stream(
        [bits.tobytes()],
        {
            "Type": "/XObject",
            "Subtype": "/Image",
            "Width": width,
            "Height": height,
            "ColorSpace": "/DeviceGray",
            "BitsPerComponent": 1,
            "Interpolate": "false",
        },
        compress=True,
    )


def _label(draw: pydyf.Stream, label: Label, code: str, x: float, y: float) -> None:
    """One label, its bottom left corner at (x, y): a dashed edge to cut along, the QR code on
    the left, the seat and its address on the right."""
    draw.push_state()
    draw.set_color_rgb(0.6, 0.6, 0.6, stroke=True)
    draw.set_line_width(0.4)
    draw.set_dash(pydyf.Array([2, 2]), 0)
    draw.rectangle(x, y, LABEL_WIDTH, LABEL_HEIGHT)
    draw.stroke()
    draw.pop_state()
    draw.push_state()
    draw.set_matrix(QR_SIZE, 0, 0, QR_SIZE, x + 1.5 * MM, y + (LABEL_HEIGHT - QR_SIZE) / 2)
    draw.draw_x_object(code)
    draw.pop_state()
    seat = label.seat
    left, top = x + WORDS_LEFT, y + LABEL_HEIGHT - 4.5 * MM
    # The seat on one line each, and the address in a fixed font on two (the site, the seat's
    # page): smaller if they must be, to fit.
    block_words = _("Block %(code)s") % {"code": seat.block.code}
    seat_words = _("Row %(row)s · Seat %(number)s") % {"row": seat.row, "number": seat.number}
    for words in (block_words, seat_words):
        top = _words(draw, top, left, "bold", _fitting(words, 10), words, lines=1)
    top = _words(draw, top - 1.5 * MM, left, "plain", 7,
                 _("See something? Report it from your seat:"), lines=3)  # fmt: skip
    for part in (label.site, label.path):
        top = _words(draw, top - 0.5 * MM, left, "fixed", _fitting(part, 7), part, lines=1)


def _fitting(text: str, size: float) -> float:
    return min(size, WORDS_WIDTH / (CHARACTER_WIDTH * max(len(text), 1)))


def _words(
    draw: pydyf.Stream, top: float, left: float, font: str, size: float, text: str,
    *, width: float = WORDS_WIDTH, lines: int = 2,
) -> float:  # fmt: skip
    """The text in lines that fit the width (at most `lines`, the last cut short), the first
    line's top at `top`; returns the top of the line after."""
    for line in _wrapped(text, int(width / (CHARACTER_WIDTH * size)), lines):
        draw.begin_text()
        draw.set_font_size(font, size)
        draw.set_text_matrix(1, 0, 0, 1, left, top - size)
        draw.show_text_string(_standard_characters(line))
        draw.end_text()
        top -= size * 1.2
    return top


def _wrapped(text: str, fits: int, lines: int) -> list[str]:
    out: list[str] = []
    for word in text.split():
        if out and len(out[-1]) + 1 + len(word) <= fits:
            out[-1] += " " + word
        else:
            out.append(word)
    if len(out) > lines:
        out = [*out[: lines - 1], " ".join(out[lines - 1 :])]
    return [line if len(line) <= fits else line[: max(fits - 1, 1)] + "…" for line in out]


def _standard_characters(text: str) -> bytes:
    """The text in the standard fonts' own characters (Windows-1252). Welsh's ŵ and ŷ are not
    among them: such a letter prints without its accent rather than as a blank."""
    try:
        return text.encode("cp1252")
    except UnicodeEncodeError:
        pass
    out = bytearray()
    for character in text:
        try:
            out += character.encode("cp1252")
        except UnicodeEncodeError:
            plain = unicodedata.normalize("NFKD", character)[0]
            out += plain.encode("cp1252", errors="replace")
    return bytes(out)


# -- the whole ground, in the background ------------------------------------------------------


def ground_labels_under_way(ground: Ground) -> SeatLabelsJob | None:
    """The ground's latest job, finished or not (None before the first)."""
    return SeatLabelsJob.objects.filter(ground=ground).order_by("-asked_at", "-pk").first()


def ground_labels_ask(*, ground: Ground, asked_by: User, site: str) -> SeatLabelsJob:
    """Start making every block's sheet, or answer the job already under way for the ground."""
    with transaction.atomic():
        running = (
            SeatLabelsJob.objects.select_for_update()
            .filter(
                ground=ground,
                finished_at__isnull=True,
                failed="",
                asked_at__gt=timezone.now() - JOB_ABANDONED_AFTER,
            )
            .first()
        )
        if running is not None:
            return running
        job = SeatLabelsJob.objects.create(
            ground=ground,
            asked_by=asked_by,
            asked_at=timezone.now(),
            site=site,
            blocks_total=ground.blocks.count(),
        )
        transaction.on_commit(lambda: _start(job.pk))
    return job


def _start(job_id: int) -> None:
    """On the worker's queue when tasks wait in the database; else beside the request, on the
    background threads: the immediate backend would make the asker wait for the whole ground."""
    from .tasks import ground_labels_task

    if settings.SAFEGROUND_TASKS == "database":
        ground_labels_task.enqueue(job_id)
    else:
        background.submit(lambda: ground_labels_make(job_id=job_id), name="ground seat labels")


def ground_labels_make(*, job_id: int) -> None:
    """Each block's sheet into one zip, the count of blocks done kept as it goes; the zip is
    stored (settings.STORAGES "default") when the last is in."""
    job = SeatLabelsJob.objects.select_related("ground").get(pk=job_id)
    blocks = list(Block.objects.filter(ground=job.ground).select_related("ground", "tier__stand"))
    SeatLabelsJob.objects.filter(pk=job.pk).update(blocks_total=len(blocks))
    try:
        with tempfile.TemporaryFile() as spool:
            with zipfile.ZipFile(spool, "w", compression=zipfile.ZIP_STORED) as archive:
                for done, block in enumerate(blocks, start=1):
                    archive.writestr(sheet_filename(block), block_sheet(block, job.site))
                    SeatLabelsJob.objects.filter(pk=job.pk).update(blocks_done=done)
            spool.seek(0)
            job.file.save(f"seat-labels-{job.ground.code}-{job.pk}.zip", File(spool), save=False)
        SeatLabelsJob.objects.filter(pk=job.pk).update(
            file=job.file.name, blocks_done=len(blocks), finished_at=timezone.now()
        )
    except Exception as error:
        SeatLabelsJob.objects.filter(pk=job.pk).update(failed=str(error)[:200] or "failed")
        raise
