"""A match named with its day (matches/templatetags/match_day.py): the day on the ground's clock,
"today" in the reader's language."""

from datetime import UTC, datetime

from django.utils import timezone, translation

from safeground.matches.models import Club, Fixture
from safeground.matches.templatetags.match_day import dated, match_day


def match(kickoff: datetime) -> Fixture:
    return Fixture(home_club=Club(short_name="Northgate"), away_club=Club(short_name="Harbour"),
                   kickoff=kickoff)  # fmt: skip


def test_a_match_today_says_today_in_the_readers_language() -> None:
    today = match(timezone.now())
    assert dated(today) == "Northgate v Harbour (today)"
    with translation.override("cy"):
        assert match_day(today) == "heddiw"


def test_another_day_is_the_kick_offs_day_on_the_grounds_clock() -> None:
    assert dated(match(datetime(2016, 10, 26, 18, 45, tzinfo=UTC))) == (
        "Northgate v Harbour (26/10/2016)"
    )
    # 23:30 in UTC is half past midnight in London (BST): the next day at the ground.
    assert match_day(match(datetime(2016, 10, 26, 23, 30, tzinfo=UTC))) == "27/10/2016"


def test_a_kick_off_put_back_shows_its_new_time_beside_the_day() -> None:
    delayed = match(datetime(2016, 10, 26, 18, 45, tzinfo=UTC))
    delayed.kickoff_delay = 15
    assert dated(delayed) == "Northgate v Harbour (26/10/2016, kick-off put back 15 min to 20:00)"
    with translation.override("cy"):
        assert match_day(delayed) == "26/10/2016, y gic gyntaf wedi'i gohirio 15 munud i 20:00"
