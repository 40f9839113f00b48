"""The season dashboard is one season: the latest with a match played unless another is picked,
from the seasons the ground has played in; 1 July divides them."""

from datetime import datetime

import pytest

from safeground.reports.season import SeasonFilter, season
from tests import factories
from tests.factories import LONDON

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("no_second_factor")]


def test_the_dashboard_shows_one_season_and_offers_the_others(match_day, client_for) -> None:
    ground = match_day.ground  # its two matches: March 2024, the 2023/24 season
    last_of_2022 = factories.fixture(ground, kickoff=datetime(2023, 6, 30, 19, 45, tzinfo=LONDON))
    first_of_2023 = factories.fixture(ground, kickoff=datetime(2023, 7, 1, 15, 0, tzinfo=LONDON))

    latest = season(ground, SeasonFilter())
    assert latest.season is not None and latest.season.label == "2023/24"
    assert [s.label for s in latest.seasons] == ["2023/24", "2022/23"]
    assert [m["id"] for m in latest.matches] == [
        first_of_2023.pk,
        match_day.league_match.pk,
        match_day.cup_tie.pk,
    ]
    earlier = season(ground, SeasonFilter(season=2022))
    assert [m["id"] for m in earlier.matches] == [last_of_2022.pk]
    assert earlier.totals["matches"] == 1

    page = client_for("safety").get(f"/grounds/{ground.code}/season/?season=2022")
    html = page.content.decode()
    assert '<option value="2022" selected>2022/23</option>' in html
    assert '<option value="2023">2023/24</option>' in html
    export = client_for("safety").get(f"/grounds/{ground.code}/export/season.json?season=2022")
    assert (export.json()["season"], len(export.json()["matches"])) == ("2022/23", 1)


def test_a_season_without_a_match_at_the_ground_is_refused_naming_the_field(
    match_day, client_for
) -> None:
    refused = client_for("safety").get(f"/grounds/{match_day.ground.code}/season/?season=1999")
    assert refused.status_code == 404
    assert refused.content.decode().startswith("season: ")
