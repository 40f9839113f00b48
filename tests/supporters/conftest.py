"""A match on now at the small ground (the match day's own matches are in 2024), with a steward
posted to its away section and one to the north stand."""

from dataclasses import dataclass

import pytest
from django.utils import timezone

from safeground.accounts.models import Role, User
from safeground.matches.models import Fixture
from safeground.venues.models import Block
from tests import factories


@dataclass(frozen=True)
class Tonight:
    fixture: Fixture
    cast: factories.Cast
    away_steward: User
    north_steward: User

    def block(self, code: str) -> Block:
        return Block.objects.get(ground=self.fixture.ground, code=code)


@pytest.fixture
def tonight(match_day) -> Tonight:
    fixture = factories.fixture(
        match_day.ground,
        away_club=match_day.cup_tie.away_club,
        kickoff=timezone.now(),
        zones=factories.CUP_LAYOUT,
        stage="Tonight",
    )
    away = match_day.cast["steward"]
    north = factories.member_of(match_day.cast.home, Role.STEWARD, besides=[away])
    factories.post(fixture, away)  # the away section: S-L1, S-L2, S-L3
    factories.post(fixture, north, zone="home-north")
    return Tonight(fixture, match_day.cast, away, north)
