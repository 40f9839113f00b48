"""Text from users shows as text wherever it is shown: a log entry, a broadcast, a case's notes
and a person's name holding HTML show as that literal text on the pages, in the PDFs and the
case bundle, and in every CSV; a CSV cell that starts like a spreadsheet formula is kept as
text. (The control room and the steward's phone are also proven in a browser:
tests/browser/test_security.py.)"""

import csv
import io
import json
import zipfile
from html import escape

import pytest
from django.urls import reverse
from pypdf import PdfReader

from safeground.bans.models import Person
from safeground.casework.services import case_bundle_export, subject_add
from safeground.incidents.broadcasting import broadcast_send
from safeground.incidents.posts import steward_post_assign
from safeground.matches.models import Club
from safeground.reports.exports import csv_cell
from tests import factories

pytestmark = pytest.mark.django_db

SCRIPT = "<script>alert(1)</script>"
IMG = '"><img src=x onerror=alert(1)>'
HOSTILE = f"{SCRIPT} {IMG}"
RAW = ("<script>alert(1)", "<img src=x onerror")  # what must never reach a page unescaped


@pytest.fixture
def hostile(match_day):
    """The cup tie with HTML in a report, a broadcast, a case's title, summary and subject, and a
    banned person's names; the steward posted to the away section."""
    cup, cast = match_day.cup_tie, match_day.cast
    report = factories.report(cup, text=HOSTILE)
    steward_post_assign(
        fixture=cup, steward=cast["steward"], assigned_by=cast["safety"], zone="away-south-cup"
    )
    broadcast_send(fixture=cup, sent_by=cast["safety"], script="hold", text=HOSTILE)
    case = factories.case(cup, entries=[report], title=IMG)
    case.summary = SCRIPT  # the summary as typed; case_open strips nothing but whitespace
    case.save(update_fields=["summary"])
    subject_add(case=case, by=cast["banofficer"], kind="unidentified", description=HOSTILE)
    ban = factories.ban(cast.home, first_names=IMG, last_name=SCRIPT)
    subject_add(case=case, by=cast["banofficer"], kind="person", person=ban.person)
    return match_day, report, case, ban


def assert_shown_as_text(html: str, where: str) -> None:
    for raw in RAW:
        assert raw not in html, f"{where}: {raw!r} reached the page unescaped"
    assert escape(SCRIPT) in html or escape(SCRIPT, quote=False) in html, where


def test_pages_show_the_html_as_text(hostile, client_for, no_second_factor) -> None:
    day, _report, case, ban = hostile
    cup = day.cup_tie
    pages = {
        "control room": ("loggist", reverse("control_room", args=[cup.pk])),
        "steward's phone": ("steward", reverse("steward_page", args=[cup.pk])),
        "post-match report": ("safety", reverse("match_report", args=[cup.pk])),
        "case": ("banofficer", reverse("case", args=[case.pk])),
        "case list": ("banofficer", reverse("casework_fixture", args=[cup.pk])),
    }
    for where, (role, url) in pages.items():
        response = client_for(role).get(url)
        assert response.status_code == 200, where
        html = response.content.decode()
        for raw in RAW:
            assert raw not in html, f"{where}: {raw!r} reached the page unescaped"

    officer = client_for("banofficer")
    url = reverse("person", args=[ban.person_id])
    officer.post(url, {"reason": "Checking a steward's report"})
    assert_shown_as_text(officer.get(url).content.decode(), "register record")
    assert_shown_as_text(
        client_for("banofficer").get(reverse("case", args=[case.pk])).content.decode(), "case"
    )


def test_the_log_api_returns_the_text_as_it_was_typed(
    hostile, client_for, no_second_factor
) -> None:
    day, _report, _, _ = hostile
    entries = client_for("loggist").get(reverse("api:log_list", args=[day.cup_tie.pk])).json()
    assert HOSTILE in [e["text"] for e in entries["entries"]]


def pdf_text(data: bytes) -> str:
    return " ".join(page.extract_text() for page in PdfReader(io.BytesIO(data)).pages)


def squeeze(text: str) -> str:
    """PDF text extraction breaks lines where it likes: compare without whitespace."""
    return "".join(text.split())


def test_the_post_match_report_pdf_prints_the_text_literally(
    hostile, client_for, no_second_factor
) -> None:
    day, *_ = hostile
    response = client_for("safety").get(reverse("match_report_pdf", args=[day.cup_tie.pk]))
    assert response.status_code == 200
    text = squeeze(pdf_text(response.content))
    assert squeeze(SCRIPT) in text and squeeze(IMG) in text


def test_the_case_bundle_carries_the_text_literally(hostile) -> None:
    day, _report, case, _ = hostile
    data = case_bundle_export(case=case, by=day.cast["police"]).read()
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        summary = squeeze(pdf_text(zf.read("summary.pdf")))
        log = json.loads(zf.read("log.json"))
        manifest = json.loads(zf.read("manifest.json"))
    assert squeeze(SCRIPT) in summary and squeeze(IMG) in summary
    assert squeeze(f"{IMG} {SCRIPT}") in summary  # the person's name, as a subject
    # Each entry as hashed (its canonical JSON): the text exactly as typed.
    texts = [json.loads(e["canonical"])["text"] for e in log["entries"]]
    assert HOSTILE in texts
    assert IMG in json.dumps(manifest, ensure_ascii=False)  # the case's title


def csv_rows(response) -> list[dict[str, str]]:  # type: ignore[no-untyped-def]
    assert response.status_code == 200
    return list(csv.DictReader(io.StringIO(response.content.decode())))


def test_every_csv_keeps_html_literal_and_formulas_as_text(
    hostile, client_for, no_second_factor
) -> None:
    day, _report, _, _ban = hostile
    cup = day.cup_tie
    factories.report(cup, text='=HYPERLINK("http://example.invalid","click")')
    factories.report(cup, text="@SUM(1+1)")
    factories.ban(day.cast.home, first_names="+44 7700 900000", last_name="-1+2")
    Club.objects.filter(pk=cup.away_club_id).update(name="=cmd|' /C calc'!A0")

    log = csv_rows(client_for("loggist").get(f"/fixtures/{cup.pk}/export/log.csv"))
    texts = [row["text"] for row in log]
    assert HOSTILE in texts
    assert '\'=HYPERLINK("http://example.invalid","click")' in texts
    assert "'@SUM(1+1)" in texts

    ground = day.ground.code
    bans = csv_rows(
        client_for("banofficer").get(f"/grounds/{ground}/export/bans.csv?reason=Season+return")
    )
    names = {(row["first_names"], row["last_name"]) for row in bans}
    assert (IMG, SCRIPT) in names
    assert ("'+44 7700 900000", "'-1+2") in names

    season = csv_rows(client_for("safety").get(f"/grounds/{ground}/export/season.csv"))
    assert "'=cmd|' /C calc'!A0" in [row["opponent"] for row in season]

    scans = csv_rows(client_for("loggist").get(f"/fixtures/{cup.pk}/export/scans.csv"))
    for rows in (log, bans, season, scans):
        for row in rows:
            for value in row.values():
                assert not value.startswith(("=", "+", "@")), value


@pytest.mark.parametrize(
    ("value", "cell"),
    [
        ("=1+1", "'=1+1"),
        ("+1", "'+1"),
        ("-1", "'-1"),
        ("@A1", "'@A1"),
        ("\t=1", "'\t=1"),
        ("\r=1", "'\r=1"),
        ("plain", "plain"),
        (-3, -3),  # a number is a number
        (None, ""),
    ],
)
def test_a_cell_that_starts_like_a_formula_is_kept_as_text(value, cell) -> None:
    assert csv_cell(value) == cell


def test_person_names_are_stored_as_typed(hostile) -> None:
    *_, ban = hostile
    person = Person.objects.get(pk=ban.person_id)
    assert (person.first_names, person.last_name) == (IMG, SCRIPT)
