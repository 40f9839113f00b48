"""One clock (issue 27): a log entry's time reads the same on every surface, the ground's clock
(Europe/London), in British Summer Time as in winter: the control room and the live log's JSON,
the post-match report's page, PDF and CSV, and the case page. JSON carries ISO 8601 with the
local offset."""

import csv
import io
import json
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from pypdf import PdfReader

from safeground import clock
from safeground.incidents.models import LogEntry
from safeground.incidents.selectors import entry_event_data, incident_state
from safeground.incidents.services import Place, log_entry_append
from tests import factories

pytestmark = pytest.mark.django_db

LONDON = ZoneInfo("Europe/London")
DEBRIEF = "Debrief: the buffer held; the same stewards in the same areas next time"


# (kick-off on the ground's clock, the UTC offset that day): an evening match in summer and one
# in winter. The debrief is logged at 21:50 on the ground's clock either way: 20:50 UTC in BST.
@pytest.fixture(
    params=[
        (datetime(2024, 8, 21, 19, 45, tzinfo=LONDON), "+01:00"),
        (datetime(2024, 12, 4, 19, 45, tzinfo=LONDON), "+00:00"),
    ],
    ids=["bst", "gmt"],
)
def debriefed(request, match_day: factories.MatchDay) -> tuple[LogEntry, str]:
    kickoff, offset = request.param
    fixture = factories.fixture(
        match_day.ground,
        kickoff=kickoff,
        shares={match_day.cast.police: "police"},
    )
    entry = log_entry_append(
        fixture=fixture,
        author=match_day.cast["safety"],
        category="decision",
        text=DEBRIEF,
        place=Place(outside="Control room debrief"),
        observed_at=fixture.kickoff + timedelta(minutes=125),
    )
    return entry, offset


def test_the_json_says_the_local_time_with_its_offset(debriefed, client_for, no_second_factor):
    entry, offset = debriefed
    fixture = entry.fixture
    served = client_for("loggist").get(f"/api/fixtures/{fixture.pk}/log").json()
    (found,) = [e for e in served["entries"] if e["seq"] == entry.seq]
    assert found["observed_at"] == f"{fixture.kickoff:%Y-%m-%d}T21:50:00{offset}"
    # The control room's live frame carries the entry and its incident the same way.
    frame = entry_event_data(entry, incident_state(entry))
    assert frame["entry"]["observed_at"] == found["observed_at"]
    assert frame["incident"]["observed_at"] == found["observed_at"]


def test_the_control_room_draws_its_times_on_the_grounds_clock(
    debriefed, client_for, no_second_factor
):
    entry, _ = debriefed
    page = client_for("loggist").get(f"/fixtures/{entry.fixture_id}/control/")
    config = page.context["config"]
    # Its script formats every time it draws in this zone, whatever the browser's own is.
    assert config["timeZone"] == "Europe/London"


def test_the_post_match_report_page_pdf_and_csv_say_the_local_time(
    debriefed, client_for, no_second_factor
):
    entry, offset = debriefed
    fixture = entry.fixture
    client = client_for("safety")
    page = client.get(f"/fixtures/{fixture.pk}/report/").content.decode()
    assert f"#{entry.seq} 21:50 {entry.author_name}: {DEBRIEF}" in page

    pdf = client.get(f"/fixtures/{fixture.pk}/report.pdf").content
    text = " ".join(p.extract_text() for p in PdfReader(io.BytesIO(pdf)).pages)
    assert f"#{entry.seq} 21:50 {entry.author_name}" in text

    exported = client.get(f"/fixtures/{fixture.pk}/export/log.csv").content.decode()
    (row,) = [r for r in csv.DictReader(io.StringIO(exported)) if r["seq"] == str(entry.seq)]
    assert row["observed_at"] == f"{fixture.kickoff:%Y-%m-%d}T21:50:00{offset}"
    exported = json.loads(client.get(f"/fixtures/{fixture.pk}/export/log.json").content)
    (row,) = [r for r in exported if r["seq"] == entry.seq]
    assert row["observed_at"] == f"{fixture.kickoff:%Y-%m-%d}T21:50:00{offset}"


def test_the_case_page_says_the_local_time(debriefed, client_for, no_second_factor):
    entry, _ = debriefed
    case = factories.case(entry.fixture, entries=[entry])
    page = client_for("banofficer").get(f"/cases/{case.pk}/").content.decode()
    assert f"{entry.fixture.kickoff:%d/%m/%Y} 21:50" in page


SRC = Path(__file__).resolve().parents[1] / "src" / "safeground"


def test_every_time_leaves_through_the_clock() -> None:
    # Issue 36: a time written by hand elsewhere is a time in whatever zone it happened to hold.
    found = [
        f"{path.relative_to(SRC.parent)}:{n}: {line.strip()}"
        for path in sorted(SRC.rglob("*.py"))
        if path.name != "clock.py" or path.parent != SRC
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if ".isoformat(" in line
    ]
    assert not found, (
        "write times through safeground.clock: iso (JSON, CSV), day_iso (a day), utc_iso (only"
        " what is signed or hashed), not .isoformat():\n" + "\n".join(found)
    )


def test_the_clock_writes_a_signed_time_as_it_always_has() -> None:
    # What the chain, checkpoints, decisions and bundles were signed over: UTC, to the microsecond
    # where asked; a change here fails every record already signed.
    evening = datetime(2024, 8, 21, 21, 50, 7, tzinfo=LONDON)
    assert clock.utc_iso(evening, "microseconds") == "2024-08-21T20:50:07.000000+00:00"
    assert clock.utc_iso(evening) == "2024-08-21T20:50:07+00:00"
    assert clock.iso(evening) == "2024-08-21T21:50:07+01:00"
    # A moment's day is its day on the ground's clock: 23:30 UTC in summer is the next day.
    assert clock.day_iso(datetime(2024, 8, 21, 23, 30, tzinfo=UTC)) == "2024-08-22"
    assert clock.iso_or_none(date(2024, 8, 21)) == "2024-08-21"
    assert clock.iso_or_none(None) is None
