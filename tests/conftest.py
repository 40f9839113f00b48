"""Shared test data: the demo ground and season, and a logged-in client per demo role."""

import pytest
from django.test import Client

from safeground.accounts.models import User
from safeground.demo.season import demo_load
from safeground.matches.models import Fixture


@pytest.fixture
def demo(db):
    return demo_load()


@pytest.fixture
def cup_tie(demo) -> Fixture:
    return Fixture.objects.get(away_club__name="Chelsea")


@pytest.fixture
def league_match(demo) -> Fixture:
    return Fixture.objects.get(away_club__name="Middlesbrough")


@pytest.fixture
def login_as(demo):
    """A test client logged in as a demo user (password checked; second factor not yet)."""

    def login(username: str) -> Client:
        client = Client()
        client.force_login(User.objects.get(username=username))
        return client

    return login


@pytest.fixture
def no_second_factor(settings):
    settings.SAFEGROUND_REQUIRE_2FA = False
