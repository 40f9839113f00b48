from datetime import datetime
from typing import Any

from django.http import HttpRequest
from django.utils.translation import gettext as _
from ninja import Field, Router, Schema, Status
from ninja.security import django_auth

from safeground.accounts.models import Organisation
from safeground.accounts.permissions import (
    can_assess_risk,
    can_edit_plan,
    plan_sign_roles,
    require,
)
from safeground.errors import NotFound, answers, said
from safeground.request_body import Body
from safeground.venues.selectors import ground_for_planning

from .fixture_fields import (
    ALLOCATION_MAX,
    KICKOFF_PATTERN,
    FixtureNotFound,
    fixture_fields_read,
    fixture_refusal,
    shares_check,
)
from .forms import fixture_initial
from .models import Fixture, PlanVersion, RiskAssessment
from .selectors import (
    fixture_for,
    fixture_for_planning,
    fixture_for_risk,
    fixtures_visible_to,
    plan_current,
    plan_is_signed_off,
)
from .services import (
    PlanChanged,
    fixture_add,
    fixture_edit,
    fixture_share,
    fixture_unshare,
    plan_generate,
    plan_revise,
    plan_sign,
    risk_assess,
    risk_assessment_current,
)

router = Router(tags=["fixtures"], auth=django_auth)

KICKOFF_HELP = "the ground's local time: 2026-12-05 15:00, 05/12/2026 15:00 or ISO 8601"


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


class FixtureIn(Body):
    """A new fixture at a ground (matches/fixture_fields.py describes each field)."""

    ground: str = Field(pattern=said())
    opponent: str = Field(pattern=said())
    competition: str = Field(pattern=said())
    stage: str = ""
    kickoff: str = Field(pattern=KICKOFF_PATTERN, description=KICKOFF_HELP)
    layout: str = Field(pattern=said())
    away_allocation: int = Field(0, ge=0, le=ALLOCATION_MAX)
    shared_with: list[str] = []


class FixturePatch(Body):
    """The fields to change; shared_with, when given, is the whole new list."""

    opponent: str | None = Field(None, pattern=said())
    competition: str | None = Field(None, pattern=said())
    stage: str | None = None
    kickoff: str | None = Field(None, pattern=KICKOFF_PATTERN, description=KICKOFF_HELP)
    layout: str | None = None
    away_allocation: int | None = Field(None, ge=0, le=ALLOCATION_MAX)
    shared_with: list[str] | None = None


class ShareIn(Body):
    organisation: str = Field(min_length=1, description="the organisation's slug or name")


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
        raise fixture_refusal("organisation", problems[0][1])
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
        said = _("no organisation '%(slug)s'") % {"slug": organisation}
        raise FixtureNotFound("organisation", said)
    fixture_unshare(fixture=fixture, organisation=found, by=request.user)  # type: ignore[arg-type]
    return Status(204, None)


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
    meanings: dict[str, str]  # the meaning in other languages, from the policy file
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
        meanings=assessment.meanings,
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
    fixture = fixture_for_risk(request.user, fixture_id)
    return _risk_out(risk_assessment_current(fixture=fixture))


@router.post(
    "/fixtures/{fixture_id}/risk/assess",
    response={201: RiskOut},
    url_name="fixture_risk_assess",
)
def fixture_risk_assess(request: HttpRequest, fixture_id: int) -> Status[RiskOut]:
    """Assess again now (history logged since counts); the safety officer or police commander."""
    fixture = fixture_for_risk(request.user, fixture_id)
    require(can_assess_risk(request.user, fixture))
    user: Any = request.user
    return Status(201, _risk_out(risk_assess(fixture=fixture, by=user)))


class SignOffOut(Schema):
    role: str
    user: str
    signed_at: datetime


class PlanOut(Schema):
    fixture: int
    version: int
    category: str
    measures: dict[str, str]
    stewards: list[dict[str, Any]]
    first_aid: dict[str, Any]
    communications: dict[str, str]
    note: str
    created_at: datetime
    sign_offs: list[SignOffOut]
    signed_off: bool


class PlanChange(Body):
    """No `version` and no plan yet: the plan is made from the category. Otherwise `version` is
    the one the change was made on; `regenerate` makes a new version from the current category."""

    version: int | None = None
    regenerate: bool = False
    stewards: dict[str, int] = {}
    measures: dict[str, str] = {}
    communications: dict[str, str] = {}
    first_aiders: int | None = None
    note: str = ""


class PlanSign(Body):
    version: int


def _plan_out(version: PlanVersion) -> PlanOut:
    return PlanOut(
        fixture=version.fixture_id,
        version=version.number,
        category=version.category,
        measures=version.measures,
        stewards=version.stewards,
        first_aid=version.first_aid,
        communications=version.communications,
        note=version.note,
        created_at=version.created_at,
        sign_offs=[
            SignOffOut(role=s.role, user=s.user.username, signed_at=s.signed_at)
            for s in version.sign_offs.all()
        ],
        signed_off=plan_is_signed_off(version),
    )


@router.get("/fixtures/{fixture_id}/plan", response=PlanOut, url_name="fixture_plan")
def fixture_plan(request: HttpRequest, fixture_id: int) -> PlanOut:
    """The current version of the match plan, with its signatures."""
    fixture = fixture_for_risk(request.user, fixture_id)
    plan = plan_current(fixture)
    if plan is None:
        raise NotFound("plan", _("no plan yet: the safety officer makes it from the category"))
    return _plan_out(plan)


@router.post(
    "/fixtures/{fixture_id}/plan",
    response={201: PlanOut},
    url_name="fixture_plan_save",
    openapi_extra=answers(PlanChanged),
)
def fixture_plan_save(request: HttpRequest, fixture_id: int, change: PlanChange) -> Status[PlanOut]:
    """A new version: made from the category, or the safety officer's changes (409 when the plan
    has moved on since `version`)."""
    fixture = fixture_for_risk(request.user, fixture_id)
    require(can_edit_plan(request.user, fixture))
    user: Any = request.user
    if change.version is None or change.regenerate:
        made = plan_generate(fixture=fixture, by=user, based_on=change.version)
    else:
        made = plan_revise(
            fixture=fixture,
            by=user,
            based_on=change.version,
            stewards=change.stewards,
            measures=change.measures,
            communications=change.communications,
            first_aiders=change.first_aiders,
            note=change.note,
        )
    return Status(201, _plan_out(made))


@router.post(
    "/fixtures/{fixture_id}/plan/sign",
    response={201: SignOffOut},
    url_name="fixture_plan_sign",
    openapi_extra=answers(PlanChanged),
)
def fixture_plan_sign(request: HttpRequest, fixture_id: int, body: PlanSign) -> Status[SignOffOut]:
    """Sign the current version off: the safety officer or the police commander."""
    fixture = fixture_for_risk(request.user, fixture_id)
    require(bool(plan_sign_roles(request.user, fixture)))
    signed = plan_sign(fixture=fixture, by=request.user, version=body.version)  # type: ignore[arg-type]
    return Status(
        201, SignOffOut(role=signed.role, user=signed.user.username, signed_at=signed.signed_at)
    )
