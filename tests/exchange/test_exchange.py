"""The exchange's own rules, in one process (the exchange role switched on): identities folded
into one token however they are written, signed requests only, and the bounds per fixture."""

import json
from datetime import date

import pytest
from django.test import Client
from django.utils import translation

from safeground import signing
from safeground.exchange import oprf, signed, tokens
from safeground.exchange.models import ExchangeRecord
from safeground.exchange.services import ExchangeError, club_enrol

pytestmark = pytest.mark.django_db
# What a check declares of the club's tickets: the fixture's, and its coming fixtures'.
TICKETS = {"tickets": 50, "coming": 200}


def test_an_identity_is_one_input_however_a_club_writes_it() -> None:
    banned = tokens.banned_inputs("Ellís Ó Vantwíck", date(1990, 3, 4), filler_key=b"k")
    for name, born in [
        ("Ellis O Vantwick", date(1990, 3, 4)),
        ("ELLIS O'VANTWICK", date(1990, 3, 4)),
        ("Ó Vantwíck, Ellís", date(1990, 4, 3)),  # day and month swapped
    ]:
        assert tokens.holder_input(name, born) in banned, name
    assert tokens.holder_input("Ellis O Vantwick", date(1991, 3, 4)) not in banned
    assert tokens.holder_input("Ellis Vantwick", date(1990, 3, 4)) not in banned


def test_the_club_learns_the_same_token_and_the_exchange_sees_only_blinded_elements() -> None:
    inputs = [tokens.holder_input("Ellis O Vantwick", date(1990, 3, 4))]
    clients, blinded = oprf.blind(inputs)
    again, blinded_again = oprf.blind(inputs)
    assert blinded != blinded_again  # fresh blinding: two checks of one holder look unrelated
    first = oprf.finalize(clients, oprf.evaluate(blinded), oprf.public_key())
    second = oprf.finalize(again, oprf.evaluate(blinded_again), oprf.public_key())
    assert first == second
    with pytest.raises(oprf.OprfRefused):
        oprf.finalize(clients, oprf.evaluate(blinded), bytes(32))  # another key's proof


@pytest.fixture
def exchange(settings):
    settings.SAFEGROUND_ROLE = "exchange"
    settings.SAFEGROUND_LIMITS = {**settings.SAFEGROUND_LIMITS, "exchange.fixture": "2/d"}
    return club_enrol(
        name="Riverside Athletic", contact="security@riverside.example",
        public_key=signing.public_key_json()["public_key"],
    )  # fmt: skip


def signed_post(path: str, payload: dict, *, tamper: bool = False):
    body = json.dumps(payload).encode()
    headers = signed.headers("POST", path, body)
    sent = json.dumps(payload | {"holders": 99, **TICKETS}).encode() if tamper else body
    return Client().post(path, sent, content_type="application/json", headers=headers)


def test_only_an_enrolled_clubs_signed_request_is_answered(exchange) -> None:
    path = "/api/exchange/checks"
    unsigned = Client().post(path, {"fixture": "fixture 1", "holders": 10, **TICKETS},
                             content_type="application/json")  # fmt: skip
    assert (unsigned.status_code, unsigned.json()["code"]) == (401, "not_enrolled")
    tampered = signed_post(path, {"fixture": "fixture 1", "holders": 10, **TICKETS}, tamper=True)
    assert tampered.status_code == 401 and "does not verify" in tampered.json()["detail"]
    assert signed_post(path, {"fixture": "fixture 1", "holders": 10, **TICKETS}).status_code == 201


def test_a_signed_request_sent_twice_is_refused_as_a_replay(exchange) -> None:
    path, body = (
        "/api/exchange/checks",
        json.dumps({"fixture": "fixture 3", "holders": 5, **TICKETS}),
    )
    headers = signed.headers("POST", path, body.encode())
    first = Client().post(path, body, content_type="application/json", headers=headers)
    assert first.status_code == 201
    again = Client().post(path, body, content_type="application/json", headers=headers)
    assert (again.status_code, again.json()["code"], again.json()["field"]) == (
        409, "replayed", signed.NONCE,
    )  # fmt: skip
    assert ExchangeRecord.objects.filter(action="check").count() == 1  # not evaluated again
    unsigned_nonce = {**signed.headers("POST", path, body.encode()), signed.NONCE: "a" * 32}
    altered = Client().post(path, body, content_type="application/json", headers=unsigned_nonce)
    assert altered.status_code == 401  # the nonce is signed: a new one makes a bad signature
    assert signed_post(path, {"fixture": "fixture 3", "holders": 5, **TICKETS}).status_code == 201


def test_checks_are_bounded_per_fixture_and_every_one_is_recorded(exchange) -> None:
    for _ in range(2):
        begun = signed_post(
            "/api/exchange/checks",
            {"fixture": "fixture 7", "holders": 3, **TICKETS},
        )
        assert begun.status_code == 201
    refused = signed_post("/api/exchange/checks", {"fixture": "fixture 7", "holders": 3, **TICKETS})
    assert refused.status_code == 429
    assert refused.json() == {
        "code": "too_many_requests", "field": "fixture",
        "detail": "more than 2 checks of fixture 7 a day: wait",
    }  # fmt: skip
    other = signed_post("/api/exchange/checks", {"fixture": "fixture 8", "holders": 3, **TICKETS})
    assert other.status_code == 201
    check = ExchangeRecord.objects.filter(action="check").first()
    _, blinded = oprf.blind([b"one", b"two", b"three", b"four"])
    over = signed_post(f"/api/exchange/checks/{check.pk}/evaluate",  # type: ignore[union-attr]
                       {"blinded": [b.hex() for b in blinded]})  # fmt: skip
    assert over.status_code == 409 and over.json()["field"] == "blinded"
    records = ExchangeRecord.objects.order_by("pk").values_list("action", "fixture", "count")
    assert list(records) == [
        ("check", "fixture 7", 3), ("check", "fixture 7", 3), ("refused", "fixture 7", 3),
        ("check", "fixture 8", 3),
    ]  # fmt: skip


def test_the_exchanges_refusals_are_in_the_askers_language_codes_unchanged(exchange) -> None:
    path = "/api/exchange/checks"
    welsh = Client().post(path, {"fixture": "fixture 1", "holders": 10, **TICKETS},
                          content_type="application/json", HTTP_ACCEPT_LANGUAGE="cy")  # fmt: skip
    assert (welsh.status_code, welsh.json()["code"], welsh.json()["field"]) == (
        401, "not_enrolled", signed.KEY)  # fmt: skip
    assert welsh.json()["detail"] == "nid oes gan unrhyw glwb cofrestredig yr allwedd hon"
    with translation.override("cy"), pytest.raises(ExchangeError) as refused:
        club_enrol(name="", contact="x", public_key="")
    assert (refused.value.field, refused.value.message) == (
        "name",
        "rhowch enw'r clwb (200 nod ar y mwyaf)",
    )
