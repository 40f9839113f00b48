"""Printed documents: the template's text reaches the PDF; only the project's static files load."""

import io

import pytest
from pypdf import PdfReader

from safeground import printing


def _text(pdf: bytes) -> str:
    return "\n".join(page.extract_text() for page in PdfReader(io.BytesIO(pdf)).pages)


def test_a_template_prints_with_its_text_and_page_numbers(tmp_path, settings):
    engine = settings.TEMPLATES[0]
    settings.TEMPLATES = [{**engine, "DIRS": [*engine["DIRS"], tmp_path]}]
    (tmp_path / "doc.html").write_text(
        '{% extends "print/base.html" %}{% block content %}<h1>{{ title }}</h1>'
        "{% for n in rows %}<p>Row {{ n }}</p>{% endfor %}{% endblock %}"
    )
    pdf = printing.render_pdf("doc.html", {"title": "Briefing <Category C>", "rows": range(120)})
    text = _text(pdf)
    assert "Briefing <Category C>" in text  # escaped in HTML, printed as typed
    assert "Row 119" in text
    pages = len(PdfReader(io.BytesIO(pdf)).pages)
    assert pages >= 2
    assert f"Page {pages} of {pages}" in text  # the print CSS loaded from static files


@pytest.mark.parametrize(
    "url", ["https://example.com/x.png", "file:///etc/passwd", "https://safeground.invalid/x"]
)
def test_nothing_but_static_files_is_fetched(url):
    with pytest.raises(ValueError, match="only the project's static files"):
        printing._static_only_fetcher().fetch(url)


def test_a_static_file_is_fetched():
    css = printing._static_only_fetcher().fetch(
        "https://safeground.invalid/static/safeground/print-1.css"
    )
    assert b"@page" in css.read()


def test_the_response_is_a_named_pdf():
    response = printing.pdf_response("print/base.html", {}, "Briefing: Arsenal v Spurs")
    assert response["Content-Type"] == "application/pdf"
    assert 'filename="briefing-arsenal-v-spurs.pdf"' in response["Content-Disposition"]
    assert response.content.startswith(b"%PDF-")
