"""The decision log API: list, record, amend, review; the radio switched down and back up. The
same services and visibility as the pages; refusals in the one error shape."""

from datetime import datetime
from typing import Any

from django.http import HttpRequest
from django.utils.translation import gettext as _
from ninja import Field, Router, Status
from ninja.security import django_auth
from pydantic import create_model

from safeground.accounts.models import User
from safeground.errors import WITHOUT_NUL, NotFound, answers, said
from safeground.request_body import Body

from . import services
from .parts import KEYS, PARTS, Part, english
from .selectors import (
    decision_json,
    decision_log,
    decision_seen_by,
    fixture_for_decisions,
    fixture_for_logging_decisions,
    fixture_for_radio,
    radio_periods,
)

router = Router(tags=["decisions"], auth=django_auth)


def _text(description: str = "") -> Any:
    """An optional part of a decision: free text, no NUL."""
    return Field("", max_length=services.MAX_TEXT, pattern=WITHOUT_NUL, description=description)


def _part(part: Part) -> Any:
    """A part of a decision (decisions.parts): free text, no NUL; a required one says
    something."""
    description = english(part.label) + (f": {english(part.help)}" if part.help else "")
    if part.required:
        return Field(max_length=services.MAX_TEXT, pattern=said(), description=description)
    return _text(description)


# The decision's parts as the schema's fields, from the table.
_PART_FIELDS: dict[str, Any] = {part.key: (str, _part(part)) for part in PARTS}
DecisionPartsIn = create_model("DecisionPartsIn", __base__=Body, **_PART_FIELDS)


class DecisionIn(DecisionPartsIn):  # type: ignore[misc,valid-type]
    decision_maker: str = Field(
        min_length=1, max_length=150, description="username of the commander who decided"
    )
    review_at: datetime | None = Field(None, description="after the time decided")
    decided_at: datetime | None = Field(None, description="the time decided; empty: now")
    retrospective_reason: str = _text("needed when logged over 5 minutes after it was decided")
    links: list[int] = Field([], description="seqs of the log entries it concerns")
    home_only: bool = False
    kickoff_delay: int | None = Field(
        None,
        ge=0,
        le=services.MAX_KICKOFF_DELAY,
        description="minutes this decision puts the kick-off back (0: back to the planned time)",
    )


class AmendIn(DecisionIn):
    reason: str = Field(max_length=services.MAX_TEXT, pattern=said(), description="why amended")


class ReviewIn(Body):
    note: str = Field(max_length=services.MAX_TEXT, pattern=said())
    next_review_at: datetime | None = None


class RadioIn(Body):
    decision_maker: str = Field(min_length=1, max_length=150)
    note: str = Field("", max_length=500, pattern=r"^[^\x00]*$")


def _commander(username: str) -> User:
    found = User.objects.filter(username=username).first()
    if found is None:
        raise NotFound("decision_maker", _("no user '%(username)s'") % {"username": username})
    return found


def _parts(payload: DecisionIn) -> services.DecisionParts:
    texts: dict[str, Any] = {key: getattr(payload, key) for key in KEYS}
    return services.DecisionParts(
        **texts,
        review_at=payload.review_at,
        links=tuple(payload.links),
        home_only=payload.home_only,
        kickoff_delay=payload.kickoff_delay,
    )


def _row(request: HttpRequest, decision: Any) -> dict[str, Any]:
    rows = decision_log(request.user, decision.fixture)
    return decision_json(next(row for row in rows if row.decision.pk == decision.pk))


@router.get(
    "/fixtures/{fixture_id}/decisions", response=list[dict[str, Any]], url_name="decision_list"
)
def decision_list(request: HttpRequest, fixture_id: int) -> list[dict[str, Any]]:
    """The match's decision log as this user may see it (the log's home-only rule), in the
    order written; an amended decision names the entry that struck it through."""
    fixture = fixture_for_decisions(request.user, fixture_id)
    return [decision_json(row) for row in decision_log(request.user, fixture)]


@router.post(
    "/fixtures/{fixture_id}/decisions",
    response={201: dict[str, Any]},
    url_name="decision_record",
    openapi_extra=answers(services.DecisionError),
)
def decision_record(request: HttpRequest, fixture_id: int, payload: DecisionIn) -> Status[Any]:
    """A commander's decision, recorded by the loggist: a chained entry of the match's log."""
    fixture = fixture_for_logging_decisions(request.user, fixture_id)
    done = services.decision_record(
        fixture=fixture,
        loggist=request.user,  # type: ignore[arg-type]
        decision_maker=_commander(payload.decision_maker),
        parts=_parts(payload),
        decided_at=payload.decided_at,
        retrospective_reason=payload.retrospective_reason,
    )
    return Status(201, _row(request, done))


@router.post(
    "/fixtures/{fixture_id}/decisions/{decision_id}/amend",
    response={201: dict[str, Any]},
    url_name="decision_amend",
    openapi_extra=answers(services.DecisionError),
)
def decision_amend(
    request: HttpRequest, fixture_id: int, decision_id: int, payload: AmendIn
) -> Status[Any]:
    """An amendment: a new chained entry that strikes the decision through (never an edit)."""
    fixture = fixture_for_logging_decisions(request.user, fixture_id)
    decision = decision_seen_by(request.user, fixture, decision_id)
    done = services.decision_amend(
        decision=decision,
        loggist=request.user,  # type: ignore[arg-type]
        decision_maker=_commander(payload.decision_maker),
        parts=_parts(payload),
        reason=payload.reason,
        decided_at=payload.decided_at,
        retrospective_reason=payload.retrospective_reason,
    )
    return Status(201, _row(request, done))


@router.post(
    "/fixtures/{fixture_id}/decisions/{decision_id}/review",
    response={201: dict[str, Any]},
    url_name="decision_review",
    openapi_extra=answers(services.DecisionError),
)
def decision_review(
    request: HttpRequest, fixture_id: int, decision_id: int, payload: ReviewIn
) -> Status[Any]:
    """The decision reviewed at its review time (a chained entry too)."""
    fixture = fixture_for_logging_decisions(request.user, fixture_id)
    decision = decision_seen_by(request.user, fixture, decision_id)
    services.decision_review(
        decision=decision,
        by=request.user,  # type: ignore[arg-type]
        note=payload.note,
        next_review_at=payload.next_review_at,
    )
    return Status(201, _row(request, decision))


def _radio(request: HttpRequest, fixture_id: int, payload: RadioIn, down: bool) -> Status[Any]:
    fixture = fixture_for_radio(request.user, fixture_id)
    switch = services.radio_down if down else services.radio_restore
    done = switch(
        fixture=fixture,
        by=request.user,  # type: ignore[arg-type]
        decision_maker=_commander(payload.decision_maker),
        note=payload.note,
    )
    return Status(
        201,
        {
            "down": done.down,
            "at": done.at,
            "decision": done.decision.entry.seq,
            "broadcast": done.broadcast_id,
            "instructions": done.instructions,
            "periods": [
                {"began": p.began, "ended": p.ended, "by": p.by} for p in radio_periods(fixture)
            ],
        },
    )


@router.post(
    "/fixtures/{fixture_id}/radio/down",
    response={201: dict[str, Any]},
    url_name="radio_down",
    openapi_extra=answers(services.DecisionError),
)
def radio_down(request: HttpRequest, fixture_id: int, payload: RadioIn) -> Status[Any]:
    """The radio has failed: a logged decision, the plan's fallback instructions broadcast to
    every steward, a banner on every screen until it is switched back up."""
    return _radio(request, fixture_id, payload, down=True)


@router.post(
    "/fixtures/{fixture_id}/radio/up",
    response={201: dict[str, Any]},
    url_name="radio_up",
    openapi_extra=answers(services.DecisionError),
)
def radio_up(request: HttpRequest, fixture_id: int, payload: RadioIn) -> Status[Any]:
    """The radio works again: a logged decision, the stewards told, the banner gone."""
    return _radio(request, fixture_id, payload, down=False)
