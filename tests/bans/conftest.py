"""The home club of the factories' cast, with an empty register (tests/factories.py); the demo
register without the 55,000 cup-tie tickets, for tests/bans/test_flags.py and tests/entry (tests
that need tickets import their own); and helpers to propose bans and find the cast's users."""

from datetime import date

import pytest

from safeground.accounts.models import Organisation, User
from safeground.bans.models import Ban
from safeground.bans.services import ban_propose
from safeground.demo.season import demo_load
from safeground.matches.models import Fixture


@pytest.fixture
def home(cast) -> Organisation:
    """The club whose register it is: its staff are the cast's (banofficer, safety, security)."""
    return cast.home


@pytest.fixture
def register(db, settings):
    settings.SAFEGROUND_DEMO_TICKETS = "none"
    return demo_load()


@pytest.fixture
def club(register) -> Organisation:
    return Organisation.objects.get(name="West Ham United")


@pytest.fixture
def cup(register) -> Fixture:
    return Fixture.objects.select_related("home_club", "away_club", "ground").get(
        away_club__name="Chelsea"
    )


def user(name: str) -> User:
    return User.objects.get(username=name)


def propose(club: Organisation, first: str, last: str, dob: date, **fields) -> Ban:
    values = {
        "by": user("banofficer"),
        "organisation": club,
        "first_names": first,
        "last_name": last,
        "date_of_birth": dob,
        "type": Ban.Type.CLUB_BAN,
        "scope": Ban.Scope.CLUB,
        "starts_on": date(2016, 8, 1),
        "ends_on": date(2030, 7, 31),
        "grounds": "Threw a bottle towards the away section.",
    }
    return ban_propose(**(values | fields))
