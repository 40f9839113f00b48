"""Reading a printed seat sheet back as a phone would: its pages rasterised (PDFium), every QR
code on a page read (zxing-cpp), and the words printed to the right of each code."""

from dataclasses import dataclass

import pypdfium2
import zxingcpp

DPI = 150


@dataclass(frozen=True)
class ReadLabel:
    url: str  # what the QR code says
    beside: str  # the words printed to its right, on the same label


def pages(pdf: bytes) -> int:
    return len(pypdfium2.PdfDocument(pdf))


def page_text(pdf: bytes, number: int = 0) -> str:
    return pypdfium2.PdfDocument(pdf)[number].get_textpage().get_text_range()


def read_page(pdf: bytes, number: int = 0) -> list[ReadLabel]:
    page = pypdfium2.PdfDocument(pdf)[number]
    image = page.render(scale=DPI / 72).to_pil()
    text = page.get_textpage()
    height = page.get_height()
    labels = []
    # The labels' own kind of code only (QR, model 2): at 150 dpi the corner of a label's code
    # sometimes also reads as a Micro QR code of six digits (2 sheets in 150 with random seat
    # codes), a false read that made a page look one label too long.
    for code in zxingcpp.read_barcodes(image, formats=zxingcpp.BarcodeFormat.QRCodeModel2):
        corners = [code.position.top_left, code.position.top_right]
        corners += [code.position.bottom_left, code.position.bottom_right]
        right = max(point.x for point in corners) * 72 / DPI
        top = min(point.y for point in corners) * 72 / DPI
        bottom = max(point.y for point in corners) * 72 / DPI
        # The words beside the code: its right edge and the next 100 points (35 mm, short of
        # the next label), as high as the code. Words under the code are not in this box.
        beside = text.get_text_bounded(
            left=right, bottom=height - bottom, right=right + 100, top=height - top
        )
        labels.append(ReadLabel(code.text, " ".join(beside.split())))
    return labels
