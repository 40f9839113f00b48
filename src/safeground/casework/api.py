"""The casework API: a match's cases, their subjects (each read an access record), outcomes and
evidence (its particulars, never a file); recording an outcome; the police's arrest return for
a match; and who was there, as an RPC-style look-up (each call an access record)."""

from datetime import date, datetime
from typing import Any, Literal

from django.http import HttpRequest
from django.shortcuts import get_object_or_404
from ninja import Field, Router, Schema, Status
from ninja.security import django_auth
from pydantic import ConfigDict, JsonValue

from safeground import clock
from safeground.accounts.models import User
from safeground.bans.selectors import MAX_REASON, MIN_REASON
from safeground.errors import answers, said
from safeground.request_body import Body

from . import selectors, services
from .arrest_file import MAX_LINES, MAX_REFERENCE, ArrestRow, ArrestsRefused
from .models import Case, Evidence, Outcome, Subject
from .services import CaseworkError
from .who import MAX_ROWS, PAGE_SIZE

router = Router(tags=["casework"], auth=django_auth)


class WhoAreaIn(Body):
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


# --- cases, subjects, outcomes, evidence ---------------------------------------------------------


def _local(moment: datetime | None) -> datetime | None:
    """Times in JSON on the ground's clock, with its offset (safeground.clock)."""
    return clock.local(moment) if moment else None


def _one_of(values: list[str]) -> dict[str, JsonValue]:
    """Each model's kinds are stated as a list of values: three enums all called `Kind` would be
    one schema component."""
    return {"enum": list[JsonValue](values)}


class CaseOut(Schema):
    id: int
    fixture: int
    title: str
    summary: str
    status: Literal["open", "closed"]
    entries: list[int] = Field(description="the log entries' sequence numbers in the match's log")
    opened_by: str
    opened_at: datetime
    subjects: int
    outcomes: int
    evidence: int


def _case_out(case: Case) -> dict[str, Any]:
    return {
        "id": case.pk,
        "fixture": case.fixture_id,
        "title": case.title,
        "summary": case.summary,
        "status": case.status,
        "entries": list(case.entries.order_by("seq").values_list("seq", flat=True)),
        "opened_by": case.opened_by.get_username(),
        "opened_at": clock.local(case.opened_at),
        "subjects": case.subjects.count(),
        "outcomes": case.outcomes.count(),
        "evidence": selectors.case_evidence(case).count(),
    }


@router.get("/fixtures/{fixture_id}/cases", response={200: list[CaseOut]}, url_name="case_list")
def case_list(request: HttpRequest, fixture_id: int) -> list[dict[str, Any]]:
    """The match's cases, newest first (those about home-only entries for the home club's staff
    only). Safety officers, ban officers and the policing force's officers."""
    fixture = selectors.fixture_for_casework(request.user, fixture_id)
    return [_case_out(case) for case in selectors.cases_of(request.user, fixture)]


@router.get("/cases/{case_id}", response={200: CaseOut}, url_name="case_read")
def case_read(request: HttpRequest, case_id: int) -> dict[str, Any]:
    return _case_out(selectors.case_for(request.user, case_id))


class SubjectOut(Schema):
    id: int
    kind: str = Field(json_schema_extra=_one_of(Subject.Kind.values))
    label: str = Field(description="the person's name, the ticket holder's and seat, or the "
                       "description")  # fmt: skip
    description: str
    person: int | None = Field(description="the register's person")
    ticket: str | None = Field(description="the ticket holder's barcode")
    added_by: str
    added_at: datetime


@router.get("/cases/{case_id}/subjects", response={200: list[SubjectOut]}, url_name="case_subjects")
def case_subjects(request: HttpRequest, case_id: int) -> list[dict[str, Any]]:
    """Who or what the case is about. Naming people is a read of personal data: each person or
    ticket holder read leaves an access record in the register's log."""
    case = selectors.case_for(request.user, case_id)
    return [
        {
            "id": s.pk,
            "kind": s.kind,
            "label": s.label,
            "description": s.description,
            "person": s.person_id,
            "ticket": s.ticket.barcode if s.ticket else None,
            "added_by": s.added_by.get_username(),
            "added_at": clock.local(s.added_at),
        }
        for s in selectors.case_subjects_read(request.user, case)
    ]


class OutcomeOut(Schema):
    id: int
    kind: str = Field(json_schema_extra=_one_of(Outcome.Kind.values))
    subject: int | None
    offence: str
    home_office_offence: Outcome.HomeOfficeOffence | Literal[""]
    club: Outcome.Club | Literal[""]
    force: str
    reference: str
    ban: int | None
    note: str
    by: str
    at: datetime


def _outcome_out(o: Outcome) -> dict[str, Any]:
    return {
        "id": o.pk, "kind": o.kind, "subject": o.subject_id, "offence": o.offence,
        "home_office_offence": o.home_office_offence, "club": o.club, "force": o.force,
        "reference": o.reference, "ban": o.ban_id, "note": o.note, "by": o.by.get_username(),
        "at": clock.local(o.at),
    }  # fmt: skip


@router.get("/cases/{case_id}/outcomes", response={200: list[OutcomeOut]}, url_name="case_outcomes")
def case_outcomes(request: HttpRequest, case_id: int) -> list[dict[str, Any]]:
    """What was done: ejections, arrests (their Home Office group, club and reference), ban
    proposals, referrals; subjects by id (read them through /subjects, which is recorded)."""
    case = selectors.case_for(request.user, case_id)
    return [_outcome_out(o) for o in case.outcomes.select_related("by")]


# Stated for clients, checked by the service: no further action says why; an arrest carries
# the police's reference; an ejection or a referral names the person.
OUTCOME_RULES: list[JsonValue] = [
    {
        "if": {"properties": {"kind": {"const": "nfa"}}, "required": ["kind"]},
        "then": {"required": ["note"], "properties": {"note": {"pattern": said()}}},
    },
    {
        "if": {"properties": {"kind": {"const": "arrest"}}, "required": ["kind"]},
        "then": {"required": ["reference"], "properties": {"reference": {"pattern": said()}}},
    },
    {
        "if": {
            "properties": {"kind": {"enum": ["ejection", "court_referral"]}},
            "required": ["kind"],
        },
        "then": {"required": ["subject"], "properties": {"subject": {"type": "integer"}}},
    },
]


class OutcomeIn(Body):
    kind: Literal["ejection", "arrest", "court_referral", "nfa"] = Field(
        description="a club ban is proposed from the case page, into the register's approval"
    )
    subject: int | None = Field(None, description="a subject of this case (a person)")
    offence: str = Field("", max_length=200, description="an arrest: one of the entries' offences")
    home_office_offence: Outcome.HomeOfficeOffence | Literal[""] = Field(
        "", description="an arrest: its Home Office group (empty: the case's entries suggest one)"
    )
    club: Outcome.Club | Literal[""] = Field("", description="an arrest: empty is not known")
    force: str = Field("", max_length=200)
    reference: str = Field("", max_length=MAX_REFERENCE, description="an arrest: the police's")
    note: str = Field("", max_length=services.MAX_TEXT)

    model_config = ConfigDict(json_schema_extra={"allOf": OUTCOME_RULES})


@router.post(
    "/cases/{case_id}/outcomes",
    response={201: OutcomeOut},
    url_name="case_outcome_record",
    openapi_extra=answers(CaseworkError),
)
def case_outcome_record(request: HttpRequest, case_id: int, payload: OutcomeIn) -> Status:
    """Record an ejection, an arrest (the subject may come later), a referral for a court banning
    order or no further action. A subject that is not the case's is 404; one that is material,
    or an offence the case's entries do not name, 409."""
    case = selectors.case_for(request.user, case_id)
    subject = (
        get_object_or_404(Subject, pk=payload.subject, case=case)
        if payload.subject is not None
        else None
    )
    assert isinstance(request.user, User)
    made = services.outcome_record(
        case=case, by=request.user, kind=payload.kind, subject=subject, offence=payload.offence,
        home_office_offence=payload.home_office_offence, club=payload.club, force=payload.force,
        reference=payload.reference, note=payload.note,
    )  # fmt: skip
    return Status(201, _outcome_out(made))


class EvidenceOut(Schema):
    id: int
    kind: str = Field(json_schema_extra=_one_of(Evidence.Kind.values))
    case: int | None
    entry: int | None = Field(description="the log entry's sequence number")
    subject: int | None
    description: str
    original_name: str
    content_type: str
    size: int
    sha256: str
    camera: str
    footage_from: datetime | None
    footage_to: datetime | None
    uploaded_by: str
    uploaded_at: datetime
    erased_at: datetime | None = Field(description="retention deleted the file; its hash stays")


@router.get(
    "/cases/{case_id}/evidence", response={200: list[EvidenceOut]}, url_name="case_evidence"
)
def case_evidence(request: HttpRequest, case_id: int) -> list[dict[str, Any]]:
    """The particulars of the case's evidence and of its entries' (never a file: the file is
    opened on its page, which its chain of custody records)."""
    case = selectors.case_for(request.user, case_id)
    found = selectors.case_evidence(case).select_related("entry", "uploaded_by")
    return [_evidence_out(e) for e in found]


def _evidence_out(e: Evidence) -> dict[str, Any]:
    return {
            "id": e.pk, "kind": e.kind, "case": e.case_id,
            "entry": e.entry.seq if e.entry else None, "subject": e.subject_id,
            "description": e.description, "original_name": e.original_name,
            "content_type": e.content_type, "size": e.size, "sha256": e.sha256,
            "camera": e.camera, "footage_from": _local(e.footage_from),
            "footage_to": _local(e.footage_to),
            "uploaded_by": e.uploaded_by.get_username(), "uploaded_at": clock.local(e.uploaded_at),
            "erased_at": _local(e.erased_at),
    }  # fmt: skip


# --- the police's arrest return ------------------------------------------------------------------


class ArrestIn(Body):
    offence_group: Outcome.HomeOfficeOffence
    club: Outcome.Club
    reference: str = Field(max_length=MAX_REFERENCE, pattern=said(),
                           description="the police's custody or crime reference")  # fmt: skip
    time: datetime | None = Field(None, description="when: within 12 hours of kick-off")


class ArrestsIn(Body):
    arrests: list[ArrestIn] = Field(min_length=1, max_length=MAX_LINES)


class ArrestsOut(Schema):
    case: int | None = Field(description="the case holding them (null: all already recorded)")
    created: int
    already: list[str] = Field(description="references the match already had: not added again")


@router.post(
    "/fixtures/{fixture_id}/arrests",
    response={200: ArrestsOut},
    url_name="arrests_import",
    openapi_extra=answers(ArrestsRefused),
)
def arrests_import(request: HttpRequest, fixture_id: int, payload: ArrestsIn) -> dict[str, Any]:
    """The police's arrests for the match (the CSV's lines as JSON), checked whole: two with the
    same reference, or a time far from kick-off, refuse them all (409, each listed as
    `arrests[N].field`), and nothing is written. A reference already recorded is skipped."""
    fixture = selectors.fixture_for_casework(request.user, fixture_id)
    assert isinstance(request.user, User)
    rows = [
        ArrestRow(f"arrests[{n}]", a.offence_group, a.club, a.reference.strip(), a.time)
        for n, a in enumerate(payload.arrests)
    ]
    done = services.arrests_import(fixture=fixture, by=request.user, rows=rows)
    return {"case": done.case.pk if done.case else None, "created": done.created,
            "already": done.already}  # fmt: skip
