"""Phones' receipts through the served application: "delivered" takes the lean route
(alerts/receipts.py), everything else Django's; both answer as the API documents."""

import json
import urllib.error
import urllib.request

import pytest

from safeground.alerts.models import Alert, AlertRecipient
from safeground.alerts.services import receipt_token

pytestmark = pytest.mark.django_db(transaction=True)


def send(server: str, token: str, body: object) -> tuple[int, dict]:
    request = urllib.request.Request(
        f"http://{server}/api/alerts/receipt",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "X-Alert-Token": token},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as refused:
        return refused.code, json.loads(refused.read())


def test_a_delivered_receipt_is_stored_once_and_refusals_are_the_apis(
    asgi_server, match_day
) -> None:
    alert = Alert.objects.create(
        fixture=match_day.cup_tie, kind=Alert.Kind.TASK, title="Task for you", body="Gate C"
    )
    copy = AlertRecipient.objects.create(alert=alert, user=match_day.cast["steward"])
    token = receipt_token(copy.pk)

    assert send(asgi_server, token, {"state": "delivered"}) == (200, {"state": "delivered"})
    copy.refresh_from_db()
    first = copy.delivered_at
    assert first is not None
    assert send(asgi_server, token, {"state": "delivered"})[0] == 200
    copy.refresh_from_db()
    assert copy.delivered_at == first  # the first arrival is the one kept

    forged = f"{copy.pk}.{'0' * 32}"
    assert send(asgi_server, forged, {"state": "delivered"})[0] == 401
    status, body = send(asgi_server, receipt_token(copy.pk + 1000), {"state": "delivered"})
    assert (status, body["field"]) == (404, "token")
    status, body = send(asgi_server, token, {"state": "maybe"})
    assert status == 422
    status, body = send(asgi_server, token, {"state": "acknowledged"})
    assert (status, body["field"]) == (409, "state")  # a task is not acknowledged here


def test_a_body_too_large_for_a_receipt_is_refused_413_in_the_apis_shape(asgi_server) -> None:
    status, body = send(asgi_server, "1.token", {"state": "delivered", "pad": "x" * 2000})
    assert status == 413
    assert body == {
        "code": "too_large",
        "field": "body",
        "detail": "a receipt is at most 1024 bytes",
    }
