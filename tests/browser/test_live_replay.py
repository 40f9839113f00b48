"""The README's "watch the seed match" on the default install (SQLite, no Redis): the replay
runs in a process of its own, and the control room of the served install shows its entries live,
through the live relay (safeground.live.bus); its status line claims no update before one came."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection
from playwright.sync_api import expect

from safeground.demo.replay import scenario_fixture, scenario_load
from safeground.incidents.models import LogEntry
from safeground.incidents.selectors import RECORD_KINDS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SAFEGROUND = Path(sys.executable).with_name("safeground")


def test_the_control_room_shows_the_replay_run_in_another_process_live(site, new_page, log_in):
    if connection.vendor != "sqlite" or os.environ.get("REDIS_URL"):
        pytest.skip("the default install's path: SQLite without Redis")
    fixture = scenario_fixture(scenario_load("seed"))
    page = log_in(new_page(), "loggist")
    page.goto(f"{site}/fixtures/{fixture.pk}/control/")
    freshness = page.locator("[data-freshness]")
    expect(freshness).to_contain_text("connected · no updates yet")  # hello is not an update

    env = os.environ | {
        "DJANGO_SETTINGS_MODULE": "safeground.settings.test",
        "DATABASE_URL": f"sqlite:///{connection.settings_dict['NAME']}",
    }
    subprocess.run(
        [str(SAFEGROUND), "replay", "seed", "--speed", "0"],
        env=env,
        check=True,
        capture_output=True,
        timeout=120,
    )
    # The chained records of broadcasts, posts and photos are in the log but never shown in it.
    stored = LogEntry.objects.filter(fixture=fixture).exclude(kind__in=RECORD_KINDS).count()
    assert stored > 20
    # Every entry the other process wrote is on the page, without a reload.
    expect(page.locator("[data-log] .entry")).to_have_count(stored, timeout=20_000)
    expect(freshness).to_contain_text("last update")
