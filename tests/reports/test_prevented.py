""" "Prevented from attending" is one figure wherever it is shown: the control room's live counts,
the post-match report, the season dashboard and the exports all read entry's one selector.

The case that told them apart: a flagged holder turned away, let in once their identity was
checked, and gone out again. They attended; only the holder whose cancelled ticket never got
them in was prevented."""

import csv
import io

import pytest

from safeground.entry.models import Scan, TicketFlag
from safeground.entry.selectors import entry_counts
from safeground.reports.exports import season_rows
from safeground.reports.match_report import match_report
from safeground.reports.season import SeasonFilter, season
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def cup(match_day):  # type: ignore[no-untyped-def]
    """The cup tie's gates: one holder flagged, let in after an ID check and out again at half
    time; one with a cancelled ticket, turned away twice."""
    cup = match_day.cup_tie
    cup.reentry = True  # an exit re-opens entry: the holder is out, not inside
    cup.save(update_fields=["reentry"])
    flagged = factories.ticket(cup, block="N-L2", barcode="FLAGGED-1")
    flag = factories.flag(flagged)
    factories.ticket(cup, block="N-L1", barcode="CANCELLED-1", status="cancelled")
    assert factories.scan(cup, "FLAGGED-1", minutes=-30).reason == Scan.Reason.FLAGGED
    factories.flag(
        flagged, flag.ban, status=TicketFlag.Status.CLEARED
    )  # ID checked: another person
    assert factories.scan(cup, "FLAGGED-1", minutes=-20).decision == Scan.Decision.ADMIT
    factories.scan(cup, "FLAGGED-1", minutes=50, direction="out")
    for minutes in (-25, -10):
        assert factories.scan(cup, "CANCELLED-1", minutes=minutes).reason == "cancelled"
    flagged.refresh_from_db()
    assert flagged.entered_at is not None and not flagged.inside
    return cup


def test_prevented_is_one_figure_on_every_surface(
    cup, match_day, client_for, no_second_factor
) -> None:
    safety = client_for("safety")
    ground = match_day.ground

    live = entry_counts(cup)["prevented"]
    live_api = safety.get(f"/api/fixtures/{cup.pk}/entry/counts").json()["prevented"]
    report = match_report(cup).prevented
    report_api = safety.get(f"/api/reports/fixtures/{cup.pk}").json()["prevented"]
    report_page = safety.get(f"/fixtures/{cup.pk}/report/").content.decode()
    dashboard = season(ground, SeasonFilter())
    by_match = {m["id"]: m["prevented"] for m in dashboard.matches}
    season_page = safety.get(f"/grounds/{ground.code}/season/").content.decode()
    season_json = safety.get(f"/grounds/{ground.code}/export/season.json").json()
    season_csv = list(
        csv.DictReader(
            io.StringIO(safety.get(f"/grounds/{ground.code}/export/season.csv").content.decode())
        )
    )

    assert live == live_api == report == report_api == 1
    assert 'data-figure="prevented">1<' in report_page
    assert by_match[cup.pk] == dashboard.totals["prevented"] == 1
    assert 'data-total="prevented">1<' in season_page
    assert {m["id"]: m["prevented"] for m in season_json["matches"]}[cup.pk] == 1
    assert season_json["totals"]["prevented"] == 1
    assert [row["prevented"] for row in season_csv] == [
        str(row["prevented"]) for row in season_rows(dashboard)[1]
    ]
    assert sum(int(row["prevented"]) for row in season_csv) == 1
