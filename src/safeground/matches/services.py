"""Every write about clubs and fixtures."""

from collections.abc import Mapping
from datetime import datetime

from django.db import transaction

from safeground.accounts.models import Organisation
from safeground.errors import SafegroundError
from safeground.venues.models import Ground, Zone

from .models import Club, Competition, Fixture, FixtureShare, FixtureZone


class FixtureError(SafegroundError):
    """A fixture that cannot be made as asked; `field` names what is wrong."""

    code = "fixture_refused"


def club_ensure(
    *, name: str, short_name: str = "", organisation: Organisation | None = None
) -> Club:
    club, _ = Club.objects.get_or_create(
        name=name, defaults={"short_name": short_name or name, "organisation": organisation}
    )
    return club


def competition_ensure(*, name: str) -> Competition:
    return Competition.objects.get_or_create(name=name)[0]


@transaction.atomic
def fixture_create(
    *,
    ground: Ground,
    home_club: Club,
    away_club: Club,
    competition: Competition,
    kickoff: datetime,
    stage: str = "",
    away_allocation: int = 0,
    zones: Mapping[str, str],
    shares: Mapping[Organisation, str],
) -> Fixture:
    """Make a fixture with its zone layout (ground zone code -> use) and who works it."""
    if home_club == away_club:
        raise FixtureError("home_club", "a club cannot play itself")
    found = {z.code: z for z in Zone.objects.filter(ground=ground, code__in=zones)}
    unknown = sorted(set(zones) - set(found))
    if unknown:
        raise FixtureError("zones", f"{', '.join(unknown)} not at {ground.name}")
    fixture = Fixture.objects.create(
        ground=ground,
        home_club=home_club,
        away_club=away_club,
        competition=competition,
        stage=stage,
        kickoff=kickoff,
        away_allocation=away_allocation,
    )
    FixtureZone.objects.bulk_create(
        FixtureZone(fixture=fixture, zone=found[code], use=use) for code, use in zones.items()
    )
    FixtureShare.objects.bulk_create(
        FixtureShare(fixture=fixture, organisation=org, purpose=purpose)
        for org, purpose in shares.items()
    )
    return fixture
