"""The casework API: who was there, as an RPC-style look-up (each call an access record)."""

from datetime import date, datetime
from typing import Any

from django.http import HttpRequest
from ninja import Field, Router, Schema
from ninja.security import django_auth

from safeground.bans.selectors import MAX_REASON, MIN_REASON
from safeground.errors import said

from . import selectors
from .who import MAX_ROWS, PAGE_SIZE

router = Router(tags=["casework"], auth=django_auth)


class WhoAreaIn(Schema):
    """The area of a look-up: narrow unless asked (the entries' own rows, no adjacent block)."""

    entries: list[int] = Field(
        min_length=1, description="ids of log entries of the match (each with a block)"
    )
    rows: int = Field(0, ge=0, le=MAX_ROWS, description="rows either side (0: the entries' own)")
    adjacent: bool = Field(False, description="include the blocks the venue file says touch")


class WhoCountOut(Schema):
    areas: list[str]
    people: int
    entered: int
    large: bool = Field(description="more people than SAFEGROUND_WHO_LARGE")


class WhoIn(WhoAreaIn):
    page: int = Field(1, ge=1, description=f"the page of names, {PAGE_SIZE} a page")
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
    people: int
    large: bool = Field(description="more people than SAFEGROUND_WHO_LARGE: recorded as such")
    page: int
    pages: int
    holders: list[HolderOut]


@router.post(
    "/fixtures/{fixture_id}/who-was-there/count",
    response={200: WhoCountOut},
    url_name="who_was_there_count",
)
def who_was_there_count(
    request: HttpRequest, fixture_id: int, payload: WhoAreaIn
) -> dict[str, Any]:
    """How many ticket holders a look-up would cover, without a name: ask this first. Not an
    access record (nobody is named); the same roles as the names."""
    fixture = selectors.fixture_for(request.user, fixture_id)
    counted = selectors.who_count(
        user=request.user, fixture=fixture, entry_ids=payload.entries, rows=payload.rows,
        adjacent=payload.adjacent,
    )  # fmt: skip
    return {
        "areas": [area.label for area in counted.areas],
        "people": counted.people,
        "entered": counted.entered,
        "large": counted.large,
    }


@router.post(
    "/fixtures/{fixture_id}/who-was-there", response={200: WhoOut}, url_name="who_was_there"
)
def who_was_there(request: HttpRequest, fixture_id: int, payload: WhoIn) -> dict[str, Any]:
    """The ticket holders seated near the entries, with whether and when they went in, a page of
    names at a time. Safety officers, ban officers and the policing force's officers only; every
    call is recorded with its reason in the register's access records (a look-up of more than
    SAFEGROUND_WHO_LARGE people as a large one)."""
    fixture = selectors.fixture_for(request.user, fixture_id)
    found = selectors.who_was_there(
        user=request.user, fixture=fixture, entry_ids=payload.entries, rows=payload.rows,
        adjacent=payload.adjacent, reason=payload.reason, page=payload.page,
    )  # fmt: skip
    return {
        "areas": [area.label for area in found.areas],
        "people": found.people,
        "large": found.large,
        "page": found.page,
        "pages": found.pages,
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
