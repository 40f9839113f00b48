from datetime import datetime

from django.http import HttpRequest
from ninja import Router, Schema
from ninja.security import django_auth

from .models import Fixture
from .selectors import fixture_for, fixtures_visible_to

router = Router(tags=["fixtures"], auth=django_auth)


class FixtureOut(Schema):
    id: int
    home_club: str
    away_club: str
    competition: str
    stage: str
    kickoff: datetime
    ground: str
    away_allocation: int


def _out(f: Fixture) -> FixtureOut:
    return FixtureOut(
        id=f.pk,
        home_club=f.home_club.name,
        away_club=f.away_club.name,
        competition=f.competition.name,
        stage=f.stage,
        kickoff=f.kickoff,
        ground=f.ground.name,
        away_allocation=f.away_allocation,
    )


@router.get("/fixtures", response=list[FixtureOut], url_name="fixture_list")
def fixture_list(request: HttpRequest) -> list[FixtureOut]:
    """The fixtures the logged-in user works, oldest first."""
    return [_out(f) for f in fixtures_visible_to(request.user)]


@router.get("/fixtures/{fixture_id}", response=FixtureOut, url_name="fixture_detail")
def fixture_detail(request: HttpRequest, fixture_id: int) -> FixtureOut:
    return _out(fixture_for(request.user, fixture_id))
