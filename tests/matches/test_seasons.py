"""The season, once (matches.seasons): the day it starts (the risk policy's, 1 July by default),
its last day, its label; the risk score's "this season" counts from the same day."""

from datetime import date, datetime

from safeground.matches.policy import policy_current
from safeground.matches.risk import season_start
from safeground.matches.seasons import Season, season_of
from tests.factories import LONDON


def test_a_season_runs_from_1_july_to_30_june() -> None:
    assert season_of(date(2016, 10, 26)) == Season(date(2016, 7, 1), date(2017, 6, 30))
    assert season_of(date(2016, 7, 1)).start == date(2016, 7, 1)
    assert season_of(date(2016, 6, 30)) == Season(date(2015, 7, 1), date(2016, 6, 30))
    assert season_of(date(2017, 3, 1)).label == "2016/17"
    assert season_of(date(1999, 12, 31)).label == "1999/00"


def test_another_start_day_moves_both_ends() -> None:
    season = season_of(date(2016, 7, 20), (8, 1))
    assert (season.start, season.end, season.key) == (date(2015, 8, 1), date(2016, 7, 31), "2015")


def test_the_risk_scores_season_starts_on_the_same_day() -> None:
    policy = policy_current()
    assert policy.season_starts == (7, 1)
    late_june = datetime(2017, 6, 30, 20, 0, tzinfo=LONDON)
    assert season_start(policy, late_june) == datetime(2016, 7, 1, tzinfo=LONDON)
    first_day = datetime(2017, 7, 1, 15, 0, tzinfo=LONDON)
    assert season_start(policy, first_day) == datetime(2017, 7, 1, tzinfo=LONDON)
