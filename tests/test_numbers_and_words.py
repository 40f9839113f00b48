"""Numbers and words as people read them (issue 38 row 11): the thousands separated, plurals
through the translation machinery, codes shown as their words, one date format."""

import pytest
from django.utils import timezone

from safeground import clock
from safeground.incidents.models import LogCheckpoint
from safeground.incidents.services import log_checkpoint_make
from safeground.matches.services import plan_generate
from safeground.reports.season import SeasonFilter, season
from safeground.reports.views import _season_charts
from tests import factories

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("no_second_factor")]


def test_the_fixture_page_separates_the_thousands_of_the_away_allocation(match_day, client_for):
    big = factories.fixture(match_day.ground, away_allocation=5000)
    page = client_for("safety").get(f"/fixtures/{big.pk}/").content.decode()
    assert "<dd data-away-allocation>5,000</dd>" in page


def test_the_plan_shows_capacities_with_separators_and_zone_uses_in_words(match_day, client_for):
    cup = match_day.cup_tie
    rows = plan_generate(fixture=cup, by=match_day.cast["safety"]).stewards
    page = client_for("safety").get(f"/fixtures/{cup.pk}/plan/").content.decode()
    table = page[page.index("data-stewards") : page.index("data-measures")]
    assert "<td>Away supporters</td>" in table and "<td>away</td>" not in table
    for row in rows:
        assert f"{clock.count(row['capacity'])} / {clock.count(row['per'])}" in table


def test_the_reports_checkpoints_name_their_reason_in_words(match_day, client_for):
    cup = match_day.cup_tie
    factories.report(cup, category="disorder")
    log_checkpoint_make(fixture=cup, reason=LogCheckpoint.Reason.FULL_TIME)
    page = client_for("safety").get(f"/fixtures/{cup.pk}/report/").content.decode()
    assert "<td>Full time</td>" in page and "full_time</td>" not in page


def test_the_season_charts_bans_axis_is_in_the_pages_date_format(match_day):
    found = season(match_day.ground, SeasonFilter())
    labels = _season_charts(found)["bans"]["labels"]
    assert labels and all(len(label) == 10 and label[2] == "/" for label in labels)
    first = timezone.localtime(match_day.league_match.kickoff)
    assert labels[0] == f"{first:%d/%m/%Y}" or f"{first:%d/%m/%Y}" in labels
