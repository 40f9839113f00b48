"""Every write about clubs and fixtures."""

from collections.abc import Mapping
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from safeground.accounts.models import Organisation, User
from safeground.errors import SafegroundError
from safeground.venues.models import Ground, Zone

from .models import Club, Competition, Fixture, FixtureShare, FixtureZone, RiskAssessment
from .policy import Policy, policy_current
from .risk import assess


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


# --- risk assessment ----------------------------------------------------------------------------


@transaction.atomic
def risk_assess(
    *, fixture: Fixture, policy: Policy | None = None, by: User | None = None
) -> RiskAssessment:
    """Assess the fixture now under `policy` (the configured one by default) and keep it."""
    policy = policy or policy_current()
    result = assess(fixture, policy)
    return RiskAssessment.objects.create(
        fixture=fixture,
        category=result.category,
        meaning=result.meaning,
        score=result.score,
        summary=result.summary,
        factors=result.factors_json(),
        policy_path=policy.path,
        policy_sha256=policy.sha256,
        assessed_at=timezone.now(),
        assessed_by=by,
    )


def risk_assessment_current(*, fixture: Fixture) -> RiskAssessment:
    """The fixture's assessment: the latest kept one, made now if there is none or if the
    fixture is still to be played and the policy has changed since (a played match keeps the
    category it was worked under)."""
    latest = fixture.assessments.order_by("-assessed_at", "-pk").first()
    if latest is not None and fixture.kickoff <= timezone.now():
        return latest
    policy = policy_current()
    if latest is not None and latest.policy_sha256 == policy.sha256:
        return latest
    return risk_assess(fixture=fixture, policy=policy)


def risk_reassess_open(*, policy: Policy | None = None) -> list[RiskAssessment]:
    """Assess again every fixture still to be played whose latest assessment was made under
    another policy (or that has none); returns the new assessments, earliest kick-off first."""
    policy = policy or policy_current()
    made = []
    for fixture in Fixture.objects.filter(kickoff__gt=timezone.now()).select_related(
        "ground", "home_club", "away_club", "competition"
    ):
        latest = fixture.assessments.order_by("-assessed_at", "-pk").first()
        if latest is None or latest.policy_sha256 != policy.sha256:
            made.append(risk_assess(fixture=fixture, policy=policy))
    return made
