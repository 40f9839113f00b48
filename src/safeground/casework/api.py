"""The casework API: who was there, as an RPC-style look-up (each call an access record)."""

from datetime import date, datetime
from typing import Any

from django.http import HttpRequest
from ninja import Field, Router, Schema
from ninja.security import django_auth

from safeground.bans.selectors import MAX_REASON, MIN_REASON
from safeground.errors import said

from . import selectors
from .who import MAX_ROWS

router = Router(tags=["casework"], auth=django_auth)


class WhoIn(Schema):
    entries: list[int] = Field(
        min_length=1, description="ids of log entries of the match (each with a block)"
    )
    rows: int = Field(2, ge=0, le=MAX_ROWS, description="rows either side")
    adjacent: bool = Field(True, description="include the blocks the venue file says touch")
    reason: str = Field(
        min_length=MIN_REASON,
        max_length=MAX_REASON,
        pattern=said(MIN_REASON),  # as the register checks a reason
        description=f"why you need the names (recorded): {MIN_REASON} characters at least",
    )


class HolderOut(Schema):
    ticket: int
    barcode: str
    block: str
    row: str
    seat: str
    name: str
    date_of_birth: date | None  # null: erased by retention
    status: str
    entered: bool
    entered_at: datetime | None
    gate: str
    adjacent: bool


class WhoOut(Schema):
    areas: list[str]
    holders: list[HolderOut]


@router.post(
    "/fixtures/{fixture_id}/who-was-there", response={200: WhoOut}, url_name="who_was_there"
)
def who_was_there(request: HttpRequest, fixture_id: int, payload: WhoIn) -> dict[str, Any]:
    """The ticket holders seated near the entries, with whether and when they went in. Safety
    officers, ban officers and the policing force's officers only; every call is recorded with
    its reason in the register's access records."""
    fixture = selectors.fixture_for(request.user, fixture_id)
    found = selectors.who_was_there(
        user=request.user, fixture=fixture, entry_ids=payload.entries, rows=payload.rows,
        adjacent=payload.adjacent, reason=payload.reason,
    )  # fmt: skip
    return {
        "areas": [area.label for area in found.areas],
        "holders": [
            {
                "ticket": h.ticket_id,
                "barcode": h.barcode,
                "block": h.block,
                "row": h.row,
                "seat": h.seat,
                "name": h.name,
                "date_of_birth": h.date_of_birth,
                "status": h.status,
                "entered": h.entered,
                "entered_at": h.entered_at,
                "gate": h.gate,
                "adjacent": h.adjacent,
            }
            for h in found.holders
        ],
    }
