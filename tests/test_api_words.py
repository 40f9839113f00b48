"""The API's refusals of a request's shape are in the asker's language (the language cookie, else
Accept-Language; English without either): a body that does not fit the schema (422), a refusal
at the door (a NUL character, before the language middleware runs) and Django's own answers put
in the one shape. The code and the field never change: they are what a client reads."""

import json

import pytest
from django.test import Client

from safeground.api import SCHEMA_WORDS, schema_words
from tests import factories

pytestmark = pytest.mark.django_db

WELSH = {"HTTP_ACCEPT_LANGUAGE": "cy,en-GB;q=0.8"}


@pytest.fixture
def day(no_second_factor):
    return factories.match_day()


def both(client: Client, method: str, url: str, body: object = None) -> tuple[dict, dict]:
    def ask(**headers: str) -> dict:
        payload = "" if body is None else json.dumps(body)
        answer = client.generic(method, url, payload, content_type="application/json", **headers)
        return {"status": answer.status_code, **answer.json()}

    return ask(), ask(**WELSH)


def test_a_body_that_does_not_fit_the_schema_is_refused_in_welsh(day) -> None:
    loggist = factories.logged_in(day.cast["loggist"])
    url = f"/api/fixtures/{day.cup_tie.pk}/log"
    english, welsh = both(loggist, "POST", url, {"category": "missile", "severity": 9})
    assert english == {"status": 422, "code": "invalid_request", "field": "payload.severity",
                       "detail": "payload.severity: must be at most 5"}  # fmt: skip
    assert welsh == english | {"detail": "payload.severity: rhaid iddo fod yn 5 ar y mwyaf"}

    english, welsh = both(loggist, "POST", url, {"severity": "loud"})
    assert (welsh["code"], welsh["field"]) == (english["code"], english["field"]) == (
        "invalid_request", "payload.category")  # fmt: skip
    assert (
        english["detail"]
        == "payload.category: is required; payload.severity: must be a whole number"
    )
    assert (
        welsh["detail"]
        == "payload.category: mae ei angen; payload.severity: rhaid iddo fod yn rhif cyfan"
    )


def test_a_refusal_at_the_door_is_in_the_askers_language(day) -> None:
    loggist = factories.logged_in(day.cast["loggist"])
    url = f"/api/fixtures/{day.cup_tie.pk}/log"
    english, welsh = both(loggist, "POST", url, {"category": "missile", "text": "coins\x00"})
    assert english["detail"] == "must not contain a NUL character"
    assert welsh == english | {"detail": "rhaid iddo beidio â chynnwys nod NUL"}
    assert (welsh["status"], welsh["code"], welsh["field"]) == (400, "nul_character", "text")
    loggist.cookies["django_language"] = "cy"  # the steward's choice, without Accept-Language
    assert both(loggist, "POST", url, {"category": "missile", "text": "coins\x00"})[0] == welsh


def test_djangos_own_answers_in_the_one_shape_are_in_the_askers_language(day) -> None:
    loggist = factories.logged_in(day.cast["loggist"])
    english, welsh = both(loggist, "GET", "/api/no-such-route")
    assert english == {"status": 404, "code": "not_found", "field": "",
                       "detail": "no such API route"}  # fmt: skip
    assert welsh == english | {"detail": "nid oes llwybr API o'r fath"}
    english, welsh = both(Client(), "GET", "/api/fixtures")
    assert (english["status"], english["detail"], welsh["detail"]) == (
        401, "Unauthorized", "Heb awdurdod")  # fmt: skip


def test_each_schema_word_fills_its_slots_from_pydantics_context() -> None:
    slots = {"min_length": 1, "max_length": 2, "gt": 0, "ge": 0, "lt": 9, "le": 9,
             "expected": "'a'", "expected_tags": "'a'", "discriminator": "'kind'"}  # fmt: skip
    for kind in SCHEMA_WORDS:
        said = schema_words({"type": kind, "msg": "pydantic's", "ctx": slots})
        assert "%(" not in said and said != "pydantic's", kind
    # A type not listed, or a context without the slot, keeps pydantic's words (never a 500).
    assert schema_words({"type": "new_kind", "msg": "pydantic's"}) == "pydantic's"
    assert schema_words({"type": "too_long", "msg": "pydantic's", "ctx": {}}) == "pydantic's"
