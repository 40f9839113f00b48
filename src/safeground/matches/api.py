from datetime import datetime
from typing import Any

from django.http import HttpRequest
from ninja import Router, Schema, Status
from ninja.security import django_auth

from safeground.accounts.models import Organisation
from safeground.venues.selectors import ground_for_planning

from .fixture_fields import FixtureError, fixture_fields_read, shares_check
from .forms import fixture_initial
from .models import Fixture
from .selectors import fixture_for, fixture_for_planning, fixtures_visible_to
from .services import fixture_add, fixture_edit, fixture_share, fixture_unshare

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
    layout: str
    shared_with: list[str]


class FixtureIn(Schema):
    """A new fixture at a ground (matches/fixture_fields.py describes each field)."""

    ground: str
    opponent: str
    competition: str
    stage: str = ""
    kickoff: str
    layout: str
    away_allocation: int = 0
    shared_with: list[str] = []


class FixturePatch(Schema):
    """The fields to change; shared_with, when given, is the whole new list."""

    opponent: str | None = None
    competition: str | None = None
    stage: str | None = None
    kickoff: str | None = None
    layout: str | None = None
    away_allocation: int | None = None
    shared_with: list[str] | None = None


class ShareIn(Schema):
    organisation: str  # slug or name


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
        layout=f.layout.code if f.layout else "",
        shared_with=[share.organisation.slug for share in f.shares.all()],
    )


@router.get("/fixtures", response=list[FixtureOut], url_name="fixture_list")
def fixture_list(request: HttpRequest) -> list[FixtureOut]:
    """The fixtures the logged-in user works, oldest first."""
    return [
        _out(f)
        for f in fixtures_visible_to(request.user)
        .prefetch_related("shares__organisation")
        .select_related("layout")
    ]


@router.post("/fixtures", response={201: FixtureOut}, url_name="fixture_add")
def fixture_create_route(request: HttpRequest, body: FixtureIn) -> Status:
    """Add a fixture at a ground (its safety officer): all of it, or nothing and a 400."""
    ground = ground_for_planning(request.user, body.ground)
    fields = fixture_fields_read(ground=ground, data=body.dict(exclude={"ground"}))
    made = fixture_add(ground=ground, fields=fields, by=request.user)  # type: ignore[arg-type]
    return Status(201, _out(fixture_for(request.user, made.pk)))


@router.get("/fixtures/{fixture_id}", response=FixtureOut, url_name="fixture_detail")
def fixture_detail(request: HttpRequest, fixture_id: int) -> FixtureOut:
    return _out(fixture_for(request.user, fixture_id))


@router.patch("/fixtures/{fixture_id}", response=FixtureOut, url_name="fixture_change")
def fixture_change(request: HttpRequest, fixture_id: int, body: FixturePatch) -> FixtureOut:
    """Change some of a fixture's fields; the others stay as they are."""
    fixture = fixture_for_planning(request.user, fixture_id)
    data: dict[str, Any] = fixture_initial(fixture) | body.dict(exclude_none=True)
    fields = fixture_fields_read(
        ground=fixture.ground, data=data, keep_zones=fixture.layout_id is None
    )
    fixture_edit(fixture=fixture, fields=fields, by=request.user)  # type: ignore[arg-type]
    return _out(fixture_for(request.user, fixture_id))


@router.post("/fixtures/{fixture_id}/shares", response=FixtureOut, url_name="fixture_share")
def fixture_share_route(request: HttpRequest, fixture_id: int, body: ShareIn) -> FixtureOut:
    """Share the fixture with an organisation (recorded)."""
    fixture = fixture_for_planning(request.user, fixture_id)
    problems: list[tuple[str, str]] = []
    shares = shares_check(fixture.ground, fixture.away_club.name, [body.organisation], problems)
    if problems:
        raise FixtureError("organisation", problems[0][1])
    for organisation, purpose in shares.items():
        fixture_share(fixture=fixture, organisation=organisation, purpose=purpose, by=request.user)  # type: ignore[arg-type]
    return _out(fixture_for(request.user, fixture_id))


@router.delete(
    "/fixtures/{fixture_id}/shares/{organisation}", response={204: None}, url_name="fixture_unshare"
)
def fixture_unshare_route(request: HttpRequest, fixture_id: int, organisation: str) -> Status:
    """Stop sharing the fixture with an organisation (by slug; recorded)."""
    fixture = fixture_for_planning(request.user, fixture_id)
    found = Organisation.objects.filter(slug=organisation).first()
    if found is None:
        raise FixtureError("organisation", f"no organisation '{organisation}'")
    fixture_unshare(fixture=fixture, organisation=found, by=request.user)  # type: ignore[arg-type]
    return Status(204, None)
