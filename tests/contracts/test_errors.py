"""One error contract: every 4xx from the API has the shape {code, field, detail}, with a stable
code, and the OpenAPI schema documents it on every operation."""

import json

import pytest
from django.test import Client

from safeground.errors import SafegroundError
from safeground.matches.models import Fixture
from tests import factories

pytestmark = pytest.mark.django_db

SHAPE = {"code", "field", "detail"}


def _post(client: Client, url: str, body: dict) -> tuple[int, dict]:
    response = client.post(url, json.dumps(body), content_type="application/json")
    return response.status_code, response.json()


@pytest.fixture
def cup_tie(match_day) -> Fixture:
    return match_day.cup_tie


@pytest.fixture
def loggist(client_for, no_second_factor) -> Client:
    return client_for("loggist")


def test_a_refused_input_names_its_field_and_code(cup_tie, loggist) -> None:
    status, body = _post(
        loggist, f"/api/fixtures/{cup_tie.pk}/log", {"category": "missile", "block": "NO-SUCH"}
    )
    assert status == 404  # a block that does not exist (ADR 0021)
    assert set(body) == SHAPE
    assert (body["code"], body["field"]) == ("log_entry_refused", "block")
    assert "NO-SUCH" in body["detail"]


def test_a_body_that_does_not_fit_the_schema_has_the_same_shape(cup_tie, loggist) -> None:
    status, body = _post(
        loggist, f"/api/fixtures/{cup_tie.pk}/log", {"category": "missile", "severity": 9}
    )
    assert status == 422
    assert set(body) == SHAPE
    assert body["code"] == "invalid_request" and body["field"].endswith("severity")


def test_no_login_a_forbidden_role_and_a_missing_object_have_the_same_shape(
    cup_tie, client_for, no_second_factor
) -> None:
    anonymous = Client().get(f"/api/fixtures/{cup_tie.pk}/log")
    assert anonymous.status_code == 401
    assert set(anonymous.json()) == SHAPE and anonymous.json()["code"] == "unauthorized"

    missing = client_for("loggist").get("/api/fixtures/999999")
    assert missing.status_code == 404
    assert set(missing.json()) == SHAPE and missing.json()["code"] == "not_found"

    steward = client_for("steward")
    status, body = _post(steward, f"/api/fixtures/{cup_tie.pk}/broadcasts", {"script": "all_clear"})
    assert status == 403
    assert set(body) == SHAPE and body["code"] == "forbidden"


def test_a_device_without_the_right_has_the_same_shape(db, monkeypatch) -> None:
    from safeground.accounts import devices

    _, key = factories.device(factories.ground().organisation, name="Gate F turnstile 3")
    monkeypatch.setitem(devices.PROFILES, "turnstile", frozenset({"device_whoami"}))
    for url in ("/api/entry/scan", "/api/entry/bundle?turnstile=F03"):
        call = Client().post if url.endswith("scan") else Client().get
        response = call(url, headers={"X-Device-Key": key})
        assert response.status_code == 403, url
        assert set(response.json()) == SHAPE and response.json()["code"] == "forbidden", url


def test_the_schema_documents_the_error_shape_on_every_operation(client) -> None:
    schema = client.get("/api/openapi.json").json()
    assert set(schema["components"]["schemas"]["Error"]["properties"]) == SHAPE
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            for status in ("400", "401", "403", "404", "422"):
                answer = operation["responses"][status]["content"]["application/json"]
                assert answer["schema"] == {"$ref": "#/components/schemas/Error"}, (
                    path, method, status,
                )  # fmt: skip


def _subclasses(cls: type) -> set[type]:
    found = set()
    for sub in cls.__subclasses__():
        found |= {sub} | _subclasses(sub)
    return found


def test_every_error_class_has_its_own_stable_code() -> None:
    import safeground.api  # noqa: F401  (imports every app's errors)
    from safeground.venues import venue_file  # noqa: F401

    codes = [cls.code for cls in _subclasses(SafegroundError) if "code" in cls.__dict__]
    assert len(codes) == len(set(codes)), sorted(codes)
    assert all(code and code == code.lower() and " " not in code for code in codes)
