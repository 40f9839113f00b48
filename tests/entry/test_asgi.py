"""The lean scan route (entry/runtime/asgi.py) answers as the ninja route does, and passes every
other request through to the app it wraps."""

import asyncio
import json
import uuid

import pytest

from safeground.accounts import devices
from safeground.entry.models import Scan
from safeground.entry.runtime import asgi

pytestmark = pytest.mark.django_db


def body(gates, **change) -> bytes:
    scan = {"barcode": "AWAY-1", "turnstile": "F03", "nonce": str(uuid.uuid4()),
            "scanned_at": gates.before_kickoff.isoformat()}  # fmt: skip
    return json.dumps(scan | change).encode()


def test_the_lean_route_decides_like_the_ninja_route(gates) -> None:
    status, answer = asgi.scan_over_http(gates.key, body(gates))
    assert status == 200 and json.loads(answer)["decision"] == "admit"
    ninja = gates.scan("AWAY-1").json()
    lean = json.loads(asgi.scan_over_http(gates.key, body(gates))[1])
    assert lean == ninja and lean["reason"] == "already_inside"
    assert Scan.objects.count() == 3


def test_the_lean_route_refuses_as_the_ninja_route_does(gates, monkeypatch) -> None:
    assert asgi.scan_over_http(None, body(gates))[0] == 401
    assert asgi.scan_over_http("sgd_nope", body(gates))[0] == 401
    status, answer = asgi.scan_over_http(gates.key, body(gates, turnstile="Z9"))
    assert (status, json.loads(answer)["field"]) == (404, "turnstile")  # no such turnstile
    monkeypatch.setitem(devices.PROFILES, "turnstile", frozenset({"device_whoami"}))
    status, answer = asgi.scan_over_http(gates.key, body(gates))
    assert status == 403 and "may not call entry_scan" in json.loads(answer)["detail"]
    assert Scan.objects.count() == 0


@pytest.mark.parametrize(
    ("cookie", "accept", "language"),
    [
        ("", "", "en-gb"),
        ("", "cy,en-GB;q=0.8", "cy"),
        ("", "fr-FR,fr;q=0.9", "en-gb"),  # a language without a catalogue: the source
        ("django_language=cy; csrftoken=x", "en-GB,en;q=0.9", "cy"),  # their choice first
        ("django_language=en-gb", "cy", "en-gb"),
    ],
)
def test_the_lean_route_answers_in_the_language_a_page_would_be_in(cookie, accept, language):
    assert asgi.scan_language(cookie, accept) == language


def test_a_scan_is_answered_in_the_stewards_language(gates) -> None:
    welsh = json.loads(asgi.scan_in_language("cy", gates.key, body(gates))[1])
    assert welsh["decision"] == "admit" and welsh["message"].startswith("Gadewch i mewn: bloc ")
    again = json.loads(asgi.scan_in_language("cy", gates.key, body(gates))[1])
    assert again["reason"] == "already_inside"
    assert again["message"].startswith("Peidiwch â gadael i mewn: defnyddiwyd y tocyn hwn eisoes")
    english = json.loads(asgi.scan_over_http(gates.key, body(gates))[1])
    assert english["message"].startswith("Do not admit: this ticket was already used")


def call(app, method: str, path: str, payload: bytes, headers: list) -> tuple[list, list]:
    sent: list = []
    chunks = [{"type": "http.request", "body": payload[:10], "more_body": True},
              {"type": "http.request", "body": payload[10:], "more_body": False}]  # fmt: skip

    async def receive():
        return chunks.pop(0)

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "method": method, "path": path, "headers": headers}
    asyncio.run(app(scope, receive, send))
    return sent, chunks


def test_the_router_takes_scans_and_passes_the_rest(monkeypatch) -> None:
    seen: list = []
    monkeypatch.setattr(
        asgi, "scan_over_http", lambda key, b: seen.append((key, b)) or (200, b"{}")
    )
    inner: list = []

    async def app(scope, receive, send):
        inner.append(scope["path"])

    router = asgi.gates_router(app)
    sent, _ = call(
        router, "POST", "/api/entry/scan", b'{"barcode": "X-1"}', [(b"x-device-key", b"k")]
    )
    assert seen == [("k", b'{"barcode": "X-1"}')] and inner == []
    assert sent[0]["status"] == 200 and sent[1]["body"] == b"{}"
    call(router, "GET", "/api/entry/scan", b"", [])
    call(router, "POST", "/api/fixtures", b"", [])
    assert inner == ["/api/entry/scan", "/api/fixtures"]
