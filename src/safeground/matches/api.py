from datetime import datetime

from django.http import HttpRequest
from ninja import Router, Schema
from ninja.security import django_auth

from safeground.accounts.permissions import can_assess_risk, require

from .models import Fixture, RiskAssessment
from .selectors import fixture_for, fixture_for_planning, fixtures_visible_to
from .services import risk_assess, risk_assessment_current

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


class FactorOut(Schema):
    key: str
    name: str
    value: float
    weight: float
    contribution: float
    working: str
    reasons: list[str]


class RiskOut(Schema):
    fixture: int
    category: str
    meaning: str
    score: float
    summary: str
    factors: list[FactorOut]
    policy_path: str
    policy_sha256: str
    assessed_at: datetime


def _risk_out(assessment: RiskAssessment) -> RiskOut:
    return RiskOut(
        fixture=assessment.fixture_id,
        category=assessment.category,
        meaning=assessment.meaning,
        score=assessment.score,
        summary=assessment.summary,
        factors=[FactorOut(**factor) for factor in assessment.factors],
        policy_path=assessment.policy_path,
        policy_sha256=assessment.policy_sha256,
        assessed_at=assessment.assessed_at,
    )


@router.get("/fixtures/{fixture_id}/risk", response=RiskOut, url_name="fixture_risk")
def fixture_risk(request: HttpRequest, fixture_id: int) -> RiskOut:
    """The fixture's category and every factor behind it (assessed now if never assessed, or if
    the fixture is still to be played and the policy has changed)."""
    fixture = fixture_for_planning(request.user, fixture_id)
    return _risk_out(risk_assessment_current(fixture=fixture))


@router.post(
    "/fixtures/{fixture_id}/risk/assess",
    response={201: RiskOut},
    url_name="fixture_risk_assess",
)
def fixture_risk_assess(request: HttpRequest, fixture_id: int) -> tuple[int, RiskOut]:
    """Assess again now (history logged since counts); the safety officer or police commander."""
    fixture = fixture_for_planning(request.user, fixture_id)
    require(can_assess_risk(request.user, fixture))
    return 201, _risk_out(risk_assess(fixture=fixture, by=request.user))  # type: ignore[arg-type]
