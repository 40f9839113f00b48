"""What the match-day briefing says: the category and its reasons, the plan and its sign-offs,
the deployment, the checks and the seating plan. One context for the page and the PDF, and a
short summary for the stewards' phones."""

from __future__ import annotations

from typing import Any

from safeground.accounts.models import Role
from safeground.matches.models import Fixture, PlanVersion, RiskAssessment
from safeground.matches.policy import MEASURES, PolicyFileError
from safeground.matches.selectors import (
    fixture_zone_uses,
    plan_current,
    plan_signatures,
    risk_assessments,
)
from safeground.matches.services import risk_assessment_current
from safeground.venues.selectors import ground_plan

from .selectors import deployment_board

# The seating plan's fill per zone use, as SVG presentation attributes: the PDF renderer and a
# page under the strict Content-Security-Policy both draw them without any style attribute.
ZONE_FILLS = {"home": "#c9dcf0", "away": "#f4c7a1", "buffer": "#e9e2a6", "": "#eeeeee"}


def assessment_for(
    fixture: Fixture, plan: PlanVersion | None, *, assess: bool = False
) -> RiskAssessment | None:
    """The assessment the current plan was made from. Without a plan, the latest one kept; with
    `assess`, the current one (made now if none is kept or the policy changed, as the fixture
    page does), or the latest kept if the policy file is refused."""
    if plan is not None:
        return plan.assessment
    if not assess:
        return risk_assessments(fixture).first()
    try:
        return risk_assessment_current(fixture=fixture)
    except PolicyFileError:
        return risk_assessments(fixture).first()


def reasons(assessment: RiskAssessment | None) -> list[str]:
    if assessment is None:
        return []
    return [reason for factor in assessment.factors for reason in factor.get("reasons", [])]


def measures(plan: Any) -> list[tuple[str, str]]:
    names = dict(MEASURES)
    return [(names.get(key, key), text) for key, text in plan.measures.items()] if plan else []


def steward_summary(fixture: Fixture) -> dict[str, Any]:
    """For a steward's phone: the category, the measures and how to communicate."""
    plan = plan_current(fixture)
    assessment = assessment_for(fixture, plan)
    return {
        "category": plan.category if plan else (assessment.category if assessment else ""),
        "meaning": assessment.local_meaning if assessment else "",
        "measures": measures(plan),
        "communications": plan.communications if plan else {},
    }


def briefing_context(fixture: Fixture) -> dict[str, Any]:
    plan = plan_current(fixture)
    assessment = assessment_for(fixture, plan, assess=True)
    seating = ground_plan(fixture.ground, zone_uses=fixture_zone_uses(fixture))
    return {
        "fixture": fixture,
        "assessment": assessment,
        "reasons": reasons(assessment),
        "plan": plan,
        "measures": measures(plan),
        "signatures": [
            (Role(role).label, sign_off) for role, sign_off in plan_signatures(plan).items()
        ]
        if plan
        else [],
        "board": deployment_board(fixture),
        "seating": seating,
        "fills": [(b, ZONE_FILLS.get(b.zone_kind, ZONE_FILLS[""])) for b in seating.blocks],
    }
