"""The register's API: its bans (without names), a person's record (after a stated reason),
proposals, decisions and appeals. The same rules as the register's pages
(accounts/permissions.py), and every read an access record (bans.selectors)."""

from datetime import date
from typing import Any, Literal

from django.http import HttpRequest
from ninja import Field, Query, Router, Schema, Status
from ninja.security import django_auth

from safeground.accounts.models import Organisation, User
from safeground.accounts.permissions import (
    can_approve_ban,
    can_decide_appeal,
    can_propose_ban,
    can_record_appeal,
    require,
)
from safeground.errors import WITHOUT_NUL, said
from safeground.request_body import Body

from . import selectors, services
from .models import Ban, Person

router = Router(tags=["register"], auth=django_auth)

REASON = Field(
    min_length=selectors.MIN_REASON,
    max_length=selectors.MAX_REASON,
    pattern=said(selectors.MIN_REASON),
    description="why you need it (recorded in the access records)",
)


class RegisterBanOut(Schema):
    id: int
    person: int
    type: str = Field(json_schema_extra={"enum": list(Ban.Type.values)})
    scope: str = Field(json_schema_extra={"enum": list(Ban.Scope.values)})
    status: str = Field(json_schema_extra={"enum": list(Ban.Status.values)})
    issued_by: str
    starts_on: date
    ends_on: date | None
    is_life: bool


def _ban_out(ban: Ban) -> dict[str, Any]:
    return {
        "id": ban.pk,
        "person": ban.person_id,
        "type": ban.type,
        "scope": ban.scope,
        "status": ban.status,
        "issued_by": ban.issued_by,
        "starts_on": ban.starts_on,
        "ends_on": ban.ends_on,
        "is_life": ban.is_life,
    }


class BanFilter(Schema):
    reason: str = REASON
    status: str = Field("", json_schema_extra={"enum": ["", *Ban.Status.values]})


@router.get("/register/bans", response={200: list[RegisterBanOut]}, url_name="register_bans")
def register_bans(request: HttpRequest, filters: Query[BanFilter]) -> list[dict[str, Any]]:
    """The bans on your club's register, newest first, without names. The register's readers
    (ban officers, the safety officer); the listing is recorded with its reason."""
    found = selectors.bans_list(user=request.user, reason=filters.reason, status=filters.status)
    return [_ban_out(ban) for ban in found]


class PersonOut(Schema):
    id: int
    first_names: str
    last_name: str
    date_of_birth: date | None
    supporter_number: str
    bans: list[RegisterBanOut]


class ReasonQuery(Schema):
    reason: str = REASON


@router.get("/register/people/{person_id}", response={200: PersonOut}, url_name="register_person")
def register_person(
    request: HttpRequest, person_id: int, query: Query[ReasonQuery]
) -> dict[str, Any]:
    """A person's record and their bans, after a stated reason (recorded)."""
    person: Person = selectors.person_read(
        user=request.user, person_id=person_id, reason=query.reason
    )
    return {
        "id": person.pk,
        "first_names": person.first_names,
        "last_name": person.last_name,
        "date_of_birth": person.date_of_birth,
        "supporter_number": person.supporter_number,
        "bans": [_ban_out(ban) for ban in person.bans.all()],
    }


class ProposalIn(Body):
    first_names: str = Field(max_length=100, pattern=said())
    last_name: str = Field(max_length=100, pattern=said())
    date_of_birth: date
    type: Literal["club_ban", "banning_order", "ground_exclusion"]
    scope: Literal["ground", "club", "register"]
    starts_on: date
    ends_on: date | None = None
    is_life: bool = False
    grounds: str = Field(max_length=services.MAX_TEXT, pattern=said())
    issued_by: str = Field("", max_length=200, pattern=WITHOUT_NUL)
    supporter_number: str = Field("", max_length=40, pattern=WITHOUT_NUL)
    reporting_conditions: str = Field("", max_length=services.MAX_TEXT, pattern=WITHOUT_NUL)
    control_periods: str = Field("", max_length=services.MAX_TEXT, pattern=WITHOUT_NUL)


def _organisation(user: User) -> Organisation:
    """The club whose register a ban officer proposes on: their one club with the right."""
    orgs = [org for org in Organisation.objects.order_by("pk") if can_propose_ban(user, org.pk)]
    require(bool(orgs))
    return orgs[0]


@router.post("/register/proposals", response={201: RegisterBanOut}, url_name="register_propose")
def register_propose(request: HttpRequest, payload: ProposalIn) -> Status[dict[str, Any]]:
    """A ban officer proposes a ban; it does nothing until another user approves it."""
    user: User = request.user  # type: ignore[assignment]
    ban = services.ban_propose(by=user, organisation=_organisation(user), **payload.dict())
    return Status(201, _ban_out(ban))


class BanDecisionIn(Body):
    decision: Literal["approve", "reject"]
    reason: str = Field(max_length=services.MAX_TEXT, pattern=said())


@router.post(
    "/register/bans/{ban_id}/decision", response={200: RegisterBanOut}, url_name="register_decide"
)
def register_decide(request: HttpRequest, ban_id: int, payload: BanDecisionIn) -> dict[str, Any]:
    """Another user approves or rejects a proposal (never its proposer)."""
    user: User = request.user  # type: ignore[assignment]
    ban = selectors.ban_for(user, ban_id)
    require(can_approve_ban(user, ban.organisation_id, proposed_by_id=ban.proposed_by_id))
    decide = services.ban_approve if payload.decision == "approve" else services.ban_reject
    return _ban_out(decide(ban=ban, by=user, reason=payload.reason))


class AppealIn(Body):
    reason: str = Field(max_length=services.MAX_TEXT, pattern=said())


@router.post(
    "/register/bans/{ban_id}/appeal", response={200: RegisterBanOut}, url_name="register_appeal"
)
def register_appeal(request: HttpRequest, ban_id: int, payload: AppealIn) -> dict[str, Any]:
    """Record that the person appeals; the ban stays in force until the appeal is decided."""
    user: User = request.user  # type: ignore[assignment]
    ban = selectors.ban_for(user, ban_id)
    require(can_record_appeal(user, ban.organisation_id))
    return _ban_out(services.ban_appeal(ban=ban, by=user, reason=payload.reason))


class AppealDecisionIn(Body):
    outcome: Literal["upheld", "revoked"]
    reason: str = Field(max_length=services.MAX_TEXT, pattern=said())


@router.post(
    "/register/bans/{ban_id}/appeal/decision",
    response={200: RegisterBanOut},
    url_name="register_appeal_decide",
)
def register_appeal_decide(
    request: HttpRequest, ban_id: int, payload: AppealDecisionIn
) -> dict[str, Any]:
    """A third user (neither proposer nor approver) upholds or revokes the ban."""
    user: User = request.user  # type: ignore[assignment]
    ban = selectors.ban_for(user, ban_id)
    require(
        can_decide_appeal(
            user,
            ban.organisation_id,
            proposed_by_id=ban.proposed_by_id,
            approved_by_id=ban.approved_by_id,
        )
    )
    decided = services.ban_appeal_decide(
        ban=ban, by=user, outcome=payload.outcome, reason=payload.reason
    )
    return _ban_out(decided)
