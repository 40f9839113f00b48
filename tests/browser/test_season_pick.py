"""The safety officer reads one season at the ground, then picks an earlier one from the list of
seasons the ground has played in: the table and the charts are that season's alone."""

import re
from datetime import datetime

import pytest
from playwright.sync_api import expect

from safeground.matches.models import Fixture
from tests import factories
from tests.factories import LONDON

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_picking_an_earlier_season_shows_its_matches_alone(site, new_page, log_in):
    ground = Fixture.objects.get(away_club__name="Chelsea", stage="Fourth round").ground
    earlier = factories.fixture(ground, kickoff=datetime(2015, 9, 12, 15, 0, tzinfo=LONDON))
    played_2016 = Fixture.objects.filter(
        ground=ground,
        kickoff__gte=datetime(2016, 7, 1, tzinfo=LONDON),
        kickoff__lt=datetime(2017, 7, 1, tzinfo=LONDON),
    ).count()

    page = log_in(new_page(), "safety")
    page.goto(f"{site}/grounds/{ground.code}/season/")
    expect(page.locator("#season option")).to_have_text(["2016/17", "2015/16"])
    expect(page.locator("#season")).to_have_value("2016")
    expect(page.locator("[data-season-matches] tr[data-match]")).to_have_count(played_2016)

    page.select_option("#season", label="2015/16")
    page.locator("[data-season-apply]").click()
    expect(page.locator("#season")).to_have_value("2015")
    expect(page.locator("[data-season-matches] tr[data-match]")).to_have_count(1)
    expect(page.locator("[data-total=matches]")).to_have_text("1")
    canvas = page.locator("canvas[data-chart=chart-incidents]")
    expect(canvas).to_have_attribute("data-drawn", re.compile(r"^\d+$"))
    labels = page.evaluate(
        "window.Chart.getChart(document.querySelector('canvas[data-chart=chart-incidents]'))"
        ".data.labels"
    )
    assert labels == [f"12 Sep v {earlier.away_club.short_name}"]
