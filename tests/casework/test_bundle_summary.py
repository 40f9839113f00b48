"""The bundle's summary PDF shows each entry's whole hash, wrapped inside the page (issue 27:
it ran off the page edge and was cut)."""

import io
import zipfile

import pytest
from pypdf import PdfReader

from safeground.casework.services import case_bundle_export
from safeground.incidents.services import Place
from tests import factories

pytestmark = pytest.mark.django_db

MONO_WIDTH = 0.6  # DejaVu Sans Mono's advance, in ems; its hex digits are no narrower


def _runs(pdf: bytes) -> tuple[float, list[tuple[str, float, float]]]:
    """The first page's width and each run of text on it: (text, x where it starts, its width)."""
    page = PdfReader(io.BytesIO(pdf)).pages[0]
    runs: list[tuple[str, float, float]] = []

    def visit(text, cm, tm, font, size):  # type: ignore[no-untyped-def]
        if text.strip():
            scale = cm[0] * tm[0] or 1
            runs.append(
                (text.strip(), tm[4] * cm[0] + cm[4], len(text.strip()) * size * scale * MONO_WIDTH)
            )

    page.extract_text(visitor_text=visit)
    return float(page.mediabox.width), runs


def test_the_summary_pdf_wraps_each_entry_hash_inside_the_page(match_day):
    entry = factories.report(match_day.cup_tie, category="missile", place=Place(concourse="S-L"))
    case = factories.case(match_day.cup_tie, entries=[entry], title="Coins on the concourse")
    with zipfile.ZipFile(case_bundle_export(case=case, by=match_day.cast["police"])) as zf:
        pdf = zf.read("summary.pdf")
    width, runs = _runs(pdf)
    text = " ".join(t for t, _, _ in runs)
    assert entry.hash in text.replace(" ", "")  # whole, if across lines
    pieces = [(t, x, w) for t, x, w in runs if t in entry.hash and len(t) >= 4]
    assert pieces, runs
    assert all(x + w <= width for _, x, w in pieces), (width, pieces)
    assert "South lower concourse" in text  # its place, not blank
