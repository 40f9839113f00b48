"""The deployment API: the board of one match, check-in, a check's result, the plan marked
ready. The same services as the pages; refusals in the one error shape (a 409 `plan_not_ready`
names the critical checks still open)."""

from typing import Any, Literal

from django.http import HttpRequest
from django.shortcuts import get_object_or_404
from ninja import Field, Router, Status
from ninja.security import django_auth
from pydantic import ConfigDict

from safeground.accounts.permissions import can_view_deployment, require
from safeground.errors import answers, said
from safeground.matches.selectors import fixture_for
from safeground.request_body import Body

from . import services
from .models import MatchCheck, PlanReady
from .selectors import Board, deployment_board

router = Router(tags=["deployment"], auth=django_auth)


def _ready_json(ready: PlanReady | None) -> dict[str, Any] | None:
    if ready is None:
        return None
    return {
        "version": ready.version.number,
        "by": str(ready.by),
        "at": ready.at,
        "override_reason": ready.override_reason,
        "open_critical": ready.open_critical,
    }


def _board_json(board: Board) -> dict[str, Any]:
    done = board.completion
    assert done is not None
    return {
        "plan": None
        if board.plan is None
        else {
            "version": board.plan.number,
            "category": board.plan.category,
            "signed_off": board.plan_signed_off,
        },
        "ready": _ready_json(board.ready),
        "stewards": [
            {
                "steward": row.username,
                "name": row.name,
                "post": row.post,
                "checked_in_at": row.checked_in_at,
            }
            for row in board.posted
        ],
        "not_posted": [row.username for row in board.not_posted],
        "zones": [
            {
                "zone": z.zone,
                "name": z.name,
                "use": z.use,
                "planned": z.planned,
                "posted": z.posted,
                "checked_in": z.checked_in,
            }
            for z in board.zones
        ],
        "checks": {
            "total": done.total,
            "done": done.done,
            "passed": done.passed,
            "failed": done.failed,
            "open_critical": [s.summary() for s in done.open_critical],
        },
    }


@router.get(
    "/fixtures/{fixture_id}/deployment", response=dict[str, Any], url_name="deployment_board"
)
def board(request: HttpRequest, fixture_id: int) -> dict[str, Any]:
    """Who is posted where and checked in, the plan's stewards per zone beside those posted,
    the checks' completion and whether the current plan is marked ready."""
    fixture = fixture_for(request.user, fixture_id)
    require(can_view_deployment(request.user, fixture))
    return _board_json(deployment_board(fixture))


@router.post(
    "/fixtures/{fixture_id}/check-in",
    response={201: dict[str, Any]},
    url_name="deployment_check_in",
)
def check_in(request: HttpRequest, fixture_id: int) -> Status[Any]:
    """The steward is at their post (again at the same post: the first check-in)."""
    fixture = fixture_for(request.user, fixture_id)
    done = services.steward_check_in(fixture=fixture, steward=request.user)  # type: ignore[arg-type]
    return Status(201, {"steward": done.steward.username, "checked_in_at": done.checked_in_at})


class ResultIn(Body):
    # Only the board sends a check back (recheck): a post records a pass or a failure.
    outcome: Literal["pass", "fail"] = Field(description="pass or fail")
    note: str = Field("", max_length=2000, description="what is wrong, for a failure")

    # A failure says what is wrong (stated for clients, checked by the service).
    model_config = ConfigDict(
        json_schema_extra={
            "if": {"properties": {"outcome": {"const": "fail"}}},
            "then": {"required": ["note"], "properties": {"note": {"pattern": said()}}},
        }
    )


@router.post(
    "/fixtures/{fixture_id}/checks/{check_id}/result",
    response={201: dict[str, Any]},
    url_name="deployment_check_result",
)
def check_result(
    request: HttpRequest, fixture_id: int, check_id: int, payload: ResultIn
) -> Status[Any]:
    """A check done at the post (a photo goes with it from the steward page)."""
    fixture = fixture_for(request.user, fixture_id)
    check = get_object_or_404(MatchCheck, fixture=fixture, pk=check_id)
    result = services.check_record(
        check=check,
        by=request.user,  # type: ignore[arg-type]
        outcome=payload.outcome,
        note=payload.note,
    )
    return Status(201, {"id": result.pk, "outcome": result.outcome, "at": result.at})


class ReadyIn(Body):
    override_reason: str = Field(
        "", max_length=2000, description="needed when a critical check is not passed"
    )


@router.post(
    "/fixtures/{fixture_id}/plan/ready",
    response={201: dict[str, Any]},
    url_name="deployment_plan_ready",
    openapi_extra=answers(services.PlanNotReady),
)
def plan_ready(request: HttpRequest, fixture_id: int, payload: ReadyIn) -> Status[Any]:
    """The safety officer marks the current, signed-off plan ready."""
    fixture = fixture_for(request.user, fixture_id)
    ready = services.plan_mark_ready(
        fixture=fixture,
        by=request.user,  # type: ignore[arg-type]
        override_reason=payload.override_reason,
    )
    return Status(201, _ready_json(ready))


def _comms_json(fixture: Any) -> dict[str, Any]:
    from .comms import comms_state

    state = comms_state(fixture)
    return {
        "sent_at": state.check.at if state.check else None,
        "broadcast": state.check.broadcast_id if state.check else None,
        "passed": state.passed,
        "stewards": [
            {"steward": r.username, "name": r.name, "acknowledged_at": r.acked_at}
            for r in state.recipients
        ],
    }


@router.get(
    "/fixtures/{fixture_id}/comms-check", response=dict[str, Any], url_name="deployment_comms_check"
)
def comms_check(request: HttpRequest, fixture_id: int) -> dict[str, Any]:
    """The latest communications check: who it expected (the stewards checked in when it was
    sent) and when each acknowledged it."""
    fixture = fixture_for(request.user, fixture_id)
    require(can_view_deployment(request.user, fixture))
    return _comms_json(fixture)


@router.post(
    "/fixtures/{fixture_id}/comms-check",
    response={201: dict[str, Any]},
    url_name="deployment_comms_check_send",
)
def comms_check_send(request: HttpRequest, fixture_id: int) -> Status[Any]:
    """The test alert to every steward checked in (the control room)."""
    from .comms import comms_check_send as send

    fixture = fixture_for(request.user, fixture_id)
    send(fixture=fixture, by=request.user)  # type: ignore[arg-type]
    return Status(201, _comms_json(fixture))
