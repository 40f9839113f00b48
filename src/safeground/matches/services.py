"""Every write about clubs and fixtures."""

from collections.abc import Mapping
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from safeground.accounts.models import Organisation, User
from safeground.venues.models import Ground, Layout, Zone

from .fixture_fields import FixtureError, FixtureFields
from .models import Club, Competition, Fixture, FixtureShare, FixtureZone, ShareRecord


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
    zones: Mapping[str, str] | None = None,
    layout: Layout | None = None,
    shares: Mapping[Organisation, str],
    by: User | None = None,
) -> Fixture:
    """Make a fixture with its zone layout (one of the ground's layouts, or ground zone code ->
    use) and who works it; each share is recorded."""
    if home_club == away_club:
        raise FixtureError("home_club", "a club cannot play itself")
    fixture = Fixture.objects.create(
        ground=ground,
        home_club=home_club,
        away_club=away_club,
        competition=competition,
        stage=stage,
        kickoff=kickoff,
        away_allocation=away_allocation,
        layout=layout,
    )
    _zones_set(fixture, zones=zones, layout=layout)
    for organisation, purpose in shares.items():
        fixture_share(fixture=fixture, organisation=organisation, purpose=purpose, by=by)
    return fixture


def _zones_set(fixture: Fixture, *, zones: Mapping[str, str] | None, layout: Layout | None) -> None:
    if layout is not None:
        if layout.ground_id != fixture.ground_id:
            raise FixtureError("layout", f"{layout.name} is not a layout of {fixture.ground.name}")
        zones = {code: use for code, use in layout.zones.values_list("zone__code", "use")}
    if not zones:
        raise FixtureError("layout", "choose one of the ground's layouts")
    found = {z.code: z for z in Zone.objects.filter(ground=fixture.ground, code__in=zones)}
    unknown = sorted(set(zones) - set(found))
    if unknown:
        raise FixtureError("zones", f"{', '.join(unknown)} not at {fixture.ground.name}")
    FixtureZone.objects.filter(fixture=fixture).delete()
    FixtureZone.objects.bulk_create(
        FixtureZone(fixture=fixture, zone=found[code], use=use) for code, use in zones.items()
    )


@transaction.atomic
def fixture_share(
    *, fixture: Fixture, organisation: Organisation, purpose: str, by: User | None
) -> FixtureShare:
    """Let an organisation work the fixture (the police force, the away club); recorded."""
    if organisation.pk == fixture.ground.organisation_id:
        raise FixtureError("shared_with", f"{organisation.name} is the home club already")
    if purpose not in FixtureShare.Purpose.values:
        raise FixtureError("purpose", f"must be one of {', '.join(FixtureShare.Purpose.values)}")
    share, created = FixtureShare.objects.get_or_create(
        fixture=fixture, organisation=organisation, defaults={"purpose": purpose}
    )
    if created:
        ShareRecord.objects.create(
            fixture=fixture,
            organisation=organisation,
            action=ShareRecord.Action.SHARED,
            purpose=purpose,
            by=by,
            at=timezone.now(),
        )
    return share


@transaction.atomic
def fixture_unshare(*, fixture: Fixture, organisation: Organisation, by: User | None) -> None:
    """The organisation no longer sees the fixture; recorded."""
    share = FixtureShare.objects.filter(fixture=fixture, organisation=organisation).first()
    if share is None:
        raise FixtureError("shared_with", f"{fixture} is not shared with {organisation.name}")
    share.delete()
    ShareRecord.objects.create(
        fixture=fixture,
        organisation=organisation,
        action=ShareRecord.Action.UNSHARED,
        purpose=share.purpose,
        by=by,
        at=timezone.now(),
    )


def _shares_set(fixture: Fixture, shares: Mapping[Organisation, str], by: User | None) -> None:
    current = {
        share.organisation_id: share for share in FixtureShare.objects.filter(fixture=fixture)
    }
    wanted = {organisation.pk: organisation for organisation in shares}
    for organisation_id, share in current.items():
        if organisation_id not in wanted:
            fixture_unshare(fixture=fixture, organisation=share.organisation, by=by)
    for organisation_id, organisation in wanted.items():
        if organisation_id not in current:
            fixture_share(
                fixture=fixture, organisation=organisation, purpose=shares[organisation], by=by
            )


@transaction.atomic
def fixture_add(*, ground: Ground, fields: FixtureFields, by: User | None) -> Fixture:
    """A fixture the club sets up (page, command, season file, API), from checked fields."""
    home = ground.organisation
    if fields.layout is None:
        raise FixtureError("layout", "choose one of the ground's layouts")
    return fixture_create(
        ground=ground,
        home_club=club_ensure(name=home.name, organisation=home),
        away_club=club_ensure(name=fields.opponent),
        competition=competition_ensure(name=fields.competition),
        kickoff=fields.kickoff,
        stage=fields.stage,
        away_allocation=fields.away_allocation,
        layout=fields.layout,
        shares=fields.shares,
        by=by,
    )


@transaction.atomic
def fixture_edit(*, fixture: Fixture, fields: FixtureFields, by: User | None) -> Fixture:
    """Change a fixture to the checked fields: its zones follow a new layout, and each share
    added or removed is recorded."""
    away_club = club_ensure(name=fields.opponent)
    if away_club == fixture.home_club:
        raise FixtureError("opponent", "a club cannot play itself")
    fixture.away_club = away_club
    fixture.competition = competition_ensure(name=fields.competition)
    fixture.stage = fields.stage
    fixture.kickoff = fields.kickoff
    fixture.away_allocation = fields.away_allocation
    if fields.layout is not None and fields.layout.pk != fixture.layout_id:
        fixture.layout = fields.layout
        _zones_set(fixture, zones=None, layout=fields.layout)
    fixture.save()
    _shares_set(fixture, fields.shares, by)
    return fixture


@transaction.atomic
def fixtures_import(
    *, ground: Ground, fixtures: list[FixtureFields], by: User | None
) -> list[Fixture]:
    """A season's checked fixtures, all written or none."""
    return [fixture_add(ground=ground, fields=fields, by=by) for fields in fixtures]
