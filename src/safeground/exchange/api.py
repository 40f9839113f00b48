"""The exchange's routes (/api/exchange/..., the exchange role only: elsewhere a 404), each
signed by an enrolled club (exchange/signed.py); and a club's own routes (/api/league/...):
checking a fixture now, and reading the exchange's record of the checks made against its bans.
"""

from datetime import date, datetime
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.utils.translation import gettext as _
from ninja import Field, Router, Schema, Status
from ninja.security import django_auth

from safeground.accounts.permissions import can_review_flags, can_use_register, require
from safeground.errors import answers
from safeground.matches.selectors import fixture_for
from safeground.request_body import Body

from . import checking, oprf, selectors, services
from .client import ExchangeClient, ExchangeRefused, ExchangeUnreachable
from .tokens import FORMS

router = Router(tags=["league ban exchange"])

HEX_ELEMENT = r"^[0-9a-f]{64}$"
HEX_TOKEN = r"^[0-9a-f]{128}$"


class KeyOut(Schema):
    public_key: str = Field(description="the OPRF public key (hex) clubs verify evaluations with")


@router.get("/exchange/key", response={200: KeyOut}, url_name="exchange_key")
def exchange_key(request: HttpRequest) -> dict[str, Any]:
    """The exchange's OPRF public key (an enrolled club's signed request)."""
    services.club_of(request)
    return {"public_key": oprf.public_key().hex()}


class BlindedIn(Body):
    blinded: list[str] = Field(
        min_length=1, max_length=oprf.BATCH, description="blinded elements, hex"
    )


class EvaluatedOut(Schema):
    evaluated: str = Field(description="the batch evaluated, with its proof (hex)")


def _elements(blinded: list[str]) -> list[bytes]:
    try:
        return [bytes.fromhex(item) for item in blinded]
    except ValueError as refused:
        raise services.ExchangeError("blinded", _("each element is hex")) from refused


@router.post(
    "/exchange/publication/evaluate",
    response={200: EvaluatedOut},
    url_name="exchange_publication_evaluate",
    openapi_extra=answers(services.OverBound),
)
def publication_evaluate(request: HttpRequest, payload: BlindedIn) -> dict[str, Any]:
    """A batch of the club's own banned identities, blinded, evaluated blind: in a day, at most
    tokens.FORMS for each ban the club publishes and each new one it may add (a 429)."""
    club = services.club_of(request)
    evaluated = services.evaluate(club=club, blinded=_elements(payload.blinded), check=None)
    return {"evaluated": evaluated.hex()}


class PublishedBanIn(Body):
    reference: str = Field(pattern=r"^[0-9a-f]{8,64}$")
    kind: str = Field(pattern=r"^(club_ban|banning_order|ground_exclusion)$")
    is_life: bool
    ends_on: date | None
    tokens: list[str] = Field(
        min_length=FORMS, max_length=FORMS,
        description="the ban's tokens (hex): always the same number, a filler where needed",
    )  # fmt: skip


class PublicationIn(Body):
    bans: list[PublishedBanIn] = Field(max_length=20000)


class PublicationOut(Schema):
    published: int
    withdrawn: int


@router.post(
    "/exchange/publication", response={200: PublicationOut}, url_name="exchange_publication"
)
def publication(request: HttpRequest, payload: PublicationIn) -> dict[str, Any]:
    """The club's league-wide bans in force now, replacing its last publication."""
    club = services.club_of(request)
    bans = [services.PublishedBanIn(**ban.dict()) for ban in payload.bans]
    record = services.publication_replace(club=club, bans=bans)
    return {"published": record.count, "withdrawn": record.withdrawn}


class PublishedOut(Schema):
    reference: str
    kind: str
    is_life: bool
    ends_on: date | None
    club: str
    contact: str
    tokens: list[str]


class PublishedSetOut(Schema):
    bans: list[PublishedOut]


@router.get("/exchange/published", response={200: PublishedSetOut}, url_name="exchange_published")
def published(request: HttpRequest, response: HttpResponse) -> Any:
    """Every other club's bans in force: tokens and what a match gives, never a name. Its ETag
    changes with every publication: asked with If-None-Match, an unchanged set is a 304."""
    club = services.club_of(request)
    version = f'"{selectors.published_version(club)}"'
    if request.headers.get("If-None-Match") == version:
        return HttpResponse(status=304, headers={"ETag": version})
    response["ETag"] = version
    return {"bans": selectors.published_for(club)}


class CheckIn(Body):
    fixture: str = Field(min_length=1, max_length=100, pattern=r"^[^\x00]*$")
    holders: int = Field(ge=0, le=10_000_000)
    tickets: int = Field(ge=0, le=10_000_000, description="the fixture's tickets imported")
    coming: int = Field(
        ge=0, le=100_000_000, description="the tickets imported for the club's coming fixtures"
    )
    sale: bool = Field(
        default=False,
        description="a point-of-sale check: the few holders of tickets just sold "
        "(at most services.SALE_HOLDERS), bounded by exchange.sale",
    )
    blinded: list[str] | None = Field(
        default=None,
        max_length=services.SALE_HOLDERS,
        description="a point-of-sale check's blinded elements (hex), evaluated in the same "
        "request: one round trip",
    )


class CheckOut(Schema):
    id: int


class CheckBegunOut(CheckOut):
    evaluated: str | None = Field(
        default=None, description="a point-of-sale check's batch evaluated, with its proof"
    )
    published: str = Field(
        default="", description="the published set's ETag now: fetch it again if yours differs"
    )


@router.post(
    "/exchange/checks",
    response={201: CheckBegunOut},
    url_name="exchange_check",
    openapi_extra=answers(services.MoreThanTickets, services.OverBound),
)
def check_begin(request: HttpRequest, payload: CheckIn) -> Status[dict[str, Any]]:
    """Begin a check of a fixture's holders: no more than its tickets (a 409), bounded per
    club and per fixture (a 429). A point-of-sale check may send its holders' blinded
    elements with it: evaluated at once, as the check's evaluate route would."""
    club = services.club_of(request)
    if payload.blinded is not None and not payload.sale:
        raise services.ExchangeError("blinded", _("only a point-of-sale check sends them here"))
    elements = _elements(payload.blinded) if payload.blinded else []
    check = services.check_begin(club=club, fixture=payload.fixture, holders=payload.holders,
                                 tickets=payload.tickets, coming=payload.coming,
                                 sale=payload.sale)  # fmt: skip
    evaluated = (
        services.evaluate(club=club, blinded=elements, check=check).hex() if elements else None
    )
    version = f'"{selectors.published_version(club)}"'
    return Status(201, {"id": check.pk, "evaluated": evaluated, "published": version})


def _check(request: HttpRequest, check_id: int) -> tuple[Any, Any]:
    club = services.club_of(request)
    check = selectors.check_of(club, check_id)
    if check is None:
        raise services.ExchangeNotFound("check", _("no such check of yours"))
    return club, check


@router.post(
    "/exchange/checks/{check_id}/evaluate",
    response={200: EvaluatedOut},
    url_name="exchange_check_evaluate",
    openapi_extra=answers(services.MoreThanDeclared, services.OverBound),
)
def check_evaluate(request: HttpRequest, check_id: int, payload: BlindedIn) -> dict[str, Any]:
    """A batch of the check's holders, blinded, evaluated blind: no more than it declared, and
    in a day no more than the tickets of the club's coming fixtures with the margin (a 429)."""
    club, check = _check(request, check_id)
    evaluated = services.evaluate(club=club, blinded=_elements(payload.blinded), check=check)
    return {"evaluated": evaluated.hex()}


class CheckOutcomeIn(Body):
    matched: int = Field(ge=0, le=10_000_000)


@router.post(
    "/exchange/checks/{check_id}/outcome", response={200: CheckOut}, url_name="exchange_outcome"
)
def check_outcome(request: HttpRequest, check_id: int, payload: CheckOutcomeIn) -> dict[str, Any]:
    """How many holders matched, as the club counted them (for the record)."""
    club, check = _check(request, check_id)
    return {"id": services.check_outcome(club=club, check=check, matched=payload.matched).pk}


class CheckAgainstOut(Schema):
    id: int
    club: str
    at: datetime
    holders: int
    tickets: int | None = Field(description="the fixture's tickets, as the club declared")
    coming: int | None = Field(description="its coming fixtures' tickets, as it declared")
    matched: int | None
    unusual: list[str] = Field(description="why the check was unusual (models.Unusual)")


class UnusualOut(Schema):
    club: str
    at: datetime
    what: str = Field(description="models.Unusual: what was out of the ordinary")
    fixture: str
    count: int = Field(description="holders, or evaluations, concerned")
    tickets: int | None
    check: int | None


class ChecksAgainstOut(Schema):
    checks: list[CheckAgainstOut]
    unusual: list[UnusualOut]


@router.get(
    "/exchange/checks-against-us", response={200: ChecksAgainstOut}, url_name="exchange_against"
)
def checks_against(request: HttpRequest) -> dict[str, Any]:
    """The checks other clubs made while this club's bans were published, and every unusual
    use of the exchange then (refused or flagged)."""
    return selectors.checks_against(services.club_of(request))


class OwnPublicationOut(Schema):
    at: datetime
    bans: int
    withdrawn: int


class OwnCheckOut(Schema):
    at: datetime
    fixture: str
    holders: int
    matched: int | None


class OwnRecordOut(Schema):
    published: int = Field(description="this club's bans published and in force now")
    publications: list[OwnPublicationOut]
    checks: list[OwnCheckOut]


@router.get("/exchange/record", response={200: OwnRecordOut}, url_name="exchange_record")
def own_record(request: HttpRequest) -> dict[str, Any]:
    """The exchange's record of this club's own publications and checks (newest first)."""
    return selectors.own_record(services.club_of(request))


# --- the club's own routes ---------------------------------------------------------------------


@router.get(
    "/league/checks-against-us",
    response={200: ChecksAgainstOut},
    url_name="league_checks_against",
    auth=django_auth,
    openapi_extra=answers(ExchangeRefused, ExchangeUnreachable),
)
def league_checks_against(request: HttpRequest) -> Any:
    """The exchange's record of the checks made against this club's published bans. The
    register's readers."""
    require(can_use_register(request.user))
    return ExchangeClient().get("checks-against-us")


class LeagueCheckOut(Schema):
    holders: int
    published: int
    matched: int
    flagged: int
    withdrawn: int


@router.post(
    "/league/fixtures/{fixture_id}/check",
    response={200: LeagueCheckOut},
    url_name="league_check",
    auth=django_auth,
    openapi_extra=answers(ExchangeRefused, ExchangeUnreachable),
)
def league_check(request: HttpRequest, fixture_id: int) -> dict[str, Any]:
    """Check the fixture's ticket holders against the league's published bans now; a match is
    a flag in the ban officers' review. The home club's ban officers."""
    fixture = fixture_for(request.user, fixture_id)
    require(can_review_flags(request.user, fixture.ground.organisation_id))
    report = checking.league_check(fixture=fixture)
    return report.__dict__


class TicketsCheckIn(Body):
    tickets: list[str] = Field(
        min_length=1,
        max_length=checking.SALE_HOLDERS,
        description="the barcodes of the fixture's tickets to check (just sold)",
    )


class TicketsCheckOut(LeagueCheckOut):
    matched_tickets: list[str] = Field(description="barcodes whose holder matched a league ban")
    unchecked: list[str] = Field(
        description="barcodes not checked: no holder's date of birth, or no longer valid"
    )


@router.post(
    "/league/fixtures/{fixture_id}/check-tickets",
    response={200: TicketsCheckOut},
    url_name="league_check_tickets",
    auth=django_auth,
    openapi_extra=answers(checking.LeagueCheckRefused, ExchangeRefused, ExchangeUnreachable),
)
def league_check_tickets(
    request: HttpRequest, fixture_id: int, payload: TicketsCheckIn
) -> dict[str, Any]:
    """Check the holders of a few of the fixture's tickets now, at the point of sale (before
    the tickets are printed): at most checking.SALE_HOLDERS. A match is a flag in the ban
    officers' review, as in a whole check. The home club's ban officers."""
    fixture = fixture_for(request.user, fixture_id)
    require(can_review_flags(request.user, fixture.ground.organisation_id))
    report = checking.tickets_check(fixture=fixture, barcodes=payload.tickets)
    return report.__dict__
