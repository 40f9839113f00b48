"""The exchange's bounds follow the purpose, tried as an abusing club would (issue 37): a club
checks the holders of its own fixtures, so a check of more holders than the fixture's tickets
is refused, and the holders evaluated in a day are bounded by the tickets of its coming fixtures
with a margin; its publication's evaluations are bounded by the bans it publishes. Every
brute force through each route is refused, and shown to the issuing club in its view of the
checks against it. The abusing club here is this installation (its signed requests, over the
exchange's real routes); the issuing club is enrolled with a key of its own."""

import json
from datetime import date

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from django.test import Client

from safeground import signing
from safeground.exchange import oprf, selectors, services, signed, tokens
from safeground.exchange.models import ExchangeRecord, PublishedToken
from safeground.exchange.services import PublishedBanIn, club_enrol

pytestmark = pytest.mark.django_db


@pytest.fixture
def league(settings):
    """The exchange, the issuing club with a ban published, and the abusing club (this one)."""
    settings.SAFEGROUND_ROLE = "exchange"
    settings.SAFEGROUND_EXCHANGE_TICKETS_MARGIN = 1.25
    settings.SAFEGROUND_EXCHANGE_NEW_BANS_PER_DAY = 10
    raw = Ed25519PrivateKey.generate().public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    issuing = club_enrol(name="Riverside Athletic", contact="security@riverside.example",
                         public_key=signing.b64url(raw))  # fmt: skip
    services.publication_replace(club=issuing, bans=[ban("ab", "cd")])
    abusing = club_enrol(name="Westbrook FC", contact="security@westbrook.example",
                         public_key=signing.public_key_json()["public_key"])  # fmt: skip
    return issuing, abusing


def ban(reference: str, token: str) -> PublishedBanIn:
    return PublishedBanIn(reference=reference * 8, kind="club_ban", is_life=True, ends_on=None,
                          tokens=[token * 64, token[::-1] * 64])  # fmt: skip


def post(path: str, payload: dict):
    body = json.dumps(payload).encode()
    return Client().post(path, body, content_type="application/json",
                         headers=signed.headers("POST", path, body))  # fmt: skip


def guesses(count: int, start: int = 0) -> list[str]:
    """Blinded guessed identities (invented people), as the routes take them."""
    inputs = [tokens.holder_input(f"Guess Quellmoor{n}", date(1985, 1, 1)) for n in range(count)]
    _, blinded = oprf.blind(inputs[start:])
    return [element.hex() for element in blinded]


def check(holders: int, tickets: int, coming: int, fixture: str = "fixture 9"):
    return post("/api/exchange/checks", {"fixture": fixture, "holders": holders,
                                         "tickets": tickets, "coming": coming})  # fmt: skip


def seen_by(issuing) -> dict:
    return json.loads(json.dumps(selectors.checks_against(issuing), default=str))


def test_a_check_of_more_holders_than_the_fixtures_tickets_is_refused_and_shown(league):
    issuing, _ = league
    refused = check(holders=10_000, tickets=300, coming=900)
    assert refused.status_code == 409
    assert refused.json() == {
        "code": "more_than_tickets", "field": "holders",
        "detail": "10000 holders, but the fixture has 300 tickets: a check is of a fixture's "
                  "own ticket holders",
    }  # fmt: skip
    assert not ExchangeRecord.objects.filter(action="check").exists()
    unusual = seen_by(issuing)["unusual"]
    assert [(u["club"], u["what"], u["count"], u["tickets"]) for u in unusual] == [
        ("Westbrook FC", "more_holders_than_tickets", 10_000, 300)
    ]
    bad = check(holders=10, tickets=300, coming=100)  # the coming fixtures hold this one too
    assert (bad.status_code, bad.json()["field"]) == (400, "coming")


def test_holders_walked_round_a_fixture_over_a_day_are_flagged_then_refused(league):
    issuing, abusing = league
    # 100 tickets for the club's coming fixtures: 125 holders a day with the margin.
    first = check(holders=100, tickets=100, coming=100).json()["id"]
    evaluated = post(f"/api/exchange/checks/{first}/evaluate", {"blinded": guesses(100)})
    assert evaluated.status_code == 200
    assert seen_by(issuing)["unusual"] == []  # an ordinary check of the fixture's holders

    # The same 100 tickets given other holders' names, and checked again.
    again = check(holders=100, tickets=100, coming=100).json()["id"]
    past_tickets = post(f"/api/exchange/checks/{again}/evaluate", {"blinded": guesses(20)})
    assert past_tickets.status_code == 200  # within the margin, but flagged
    over = post(f"/api/exchange/checks/{again}/evaluate", {"blinded": guesses(10)})
    assert over.status_code == 429
    assert int(over.headers["Retry-After"]) > 23 * 3600  # when the first check's day is over
    assert over.json()["detail"] == (
        "130 holders evaluated in a day would be more than the tickets of your coming fixtures "
        "allow (125): wait"
    )
    seen = seen_by(issuing)
    assert [(u["what"], u["check"]) for u in seen["unusual"]] == [
        ("holders_over_margin", again), ("holders_above_tickets", again),
    ]  # fmt: skip
    assert {(c["holders"], c["tickets"], c["coming"]) for c in seen["checks"]} == {(100, 100, 100)}
    flagged = {c["id"]: sorted(c["unusual"]) for c in seen["checks"]}
    assert flagged == {again: ["holders_above_tickets", "holders_over_margin"], first: []}
    assert ExchangeRecord.objects.filter(club=abusing, action="refused").count() == 1


def test_many_small_checks_are_flagged(league):
    issuing, _ = league
    for n in range(7):
        assert check(holders=1, tickets=40, coming=40, fixture=f"fixture {n}").status_code == 201
    checks = seen_by(issuing)["checks"]
    assert [c["unusual"] for c in checks] == [["small_checks"]] * 2 + [[]] * 5


def test_guesses_through_the_publication_route_are_refused_and_shown(league):
    issuing, abusing = league
    services.publication_replace(club=abusing, bans=[ban("ef", "01")])
    # One ban published and ten new a day: 22 evaluations a day for its publication.
    assert post("/api/exchange/publication/evaluate", {"blinded": guesses(20)}).status_code == 200
    over = post("/api/exchange/publication/evaluate", {"blinded": guesses(10)})
    assert over.status_code == 429 and "Retry-After" in over.headers
    assert over.json()["detail"] == (
        "30 evaluated in a day for your publication would be more than the bans you publish "
        "allow (22): wait"
    )
    # The next publication adds nothing: the 20 evaluated were not for it.
    services.publication_replace(club=abusing, bans=[ban("ef", "01")])
    unusual = seen_by(issuing)["unusual"]
    assert [(u["club"], u["what"], u["count"]) for u in unusual] == [
        ("Westbrook FC", "beyond_publication", 20),
        ("Westbrook FC", "publication_over_bound", 10),
    ]
    assert selectors.checks_against(abusing)["unusual"] == []  # its own doings are not shown it


def test_a_publication_with_new_bans_evaluates_what_it_needs_unflagged(league):
    issuing, abusing = league
    assert post("/api/exchange/publication/evaluate", {"blinded": guesses(4)}).status_code == 200
    services.publication_replace(club=abusing, bans=[ban("ef", "01"), ban("12", "34")])
    assert seen_by(issuing)["unusual"] == []


def test_every_ban_has_the_same_number_of_tokens_and_an_older_publication_is_renewed(league):
    issuing, _ = league
    one = {"reference": "ab" * 8, "kind": "club_ban", "is_life": True, "ends_on": None,
           "tokens": ["cd" * 64]}  # fmt: skip
    refused = post("/api/exchange/publication", {"bans": [one]})
    assert refused.status_code == 422 and "tokens" in json.dumps(refused.json())
    # A ban published before with one token (the older form) is given two by the next.
    row = issuing.bans.get()
    row.tokens.exclude(token="cd" * 64).delete()
    services.publication_replace(club=issuing, bans=[ban("ab", "cd")])
    assert sorted(PublishedToken.objects.filter(ban=row).values_list("token", flat=True)) == [
        "cd" * 64, "dc" * 64,
    ]  # fmt: skip
    record = ExchangeRecord.objects.filter(club=issuing, action="publish").first()
    assert record is not None and record.detail == "0 new, 1 renewed"


def test_a_banned_person_always_gives_two_inputs_the_filler_matching_nobody() -> None:
    swappable = tokens.banned_inputs("Ellis Vantwick", date(1990, 3, 4), filler_key=b"a")
    assert swappable == [
        tokens.holder_input("Ellis Vantwick", date(1990, 3, 4)),
        tokens.holder_input("Ellis Vantwick", date(1990, 4, 3)),
    ]
    for born in (date(1990, 3, 24), date(1990, 5, 5)):  # day over 12; day and month the same
        given, filler = tokens.banned_inputs("Ellis Vantwick", born, filler_key=b"a")
        assert given == tokens.holder_input("Ellis Vantwick", born)
        assert filler == tokens.banned_inputs("Ellis Vantwick", born, filler_key=b"a")[1]
        assert filler != tokens.banned_inputs("Ellis Vantwick", born, filler_key=b"b")[1]
        assert b"Vantwick" not in filler and str(born.year).encode() not in filler
