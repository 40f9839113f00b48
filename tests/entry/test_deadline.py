"""The lean scan route under a slow or absent database, and with bodies too big: every scan is
answered within its deadline (SAFEGROUND_SCAN_DEADLINE_SECONDS), a 503 in the one error shape with
Retry-After when the database did not answer, never a 500 or a late 200; a scan still waiting at
its deadline is never decided; a body over the limit is a 413 before it is read."""

import asyncio
import json
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import OperationalError

from safeground.entry.runtime import asgi, lookups, threads
from safeground.errors import ARRIVED

pytestmark = pytest.mark.django_db


def scan_body() -> bytes:
    return json.dumps({"barcode": "AWAY-1", "turnstile": "F03", "nonce": str(uuid.uuid4()),
                       "scanned_at": "2016-10-26T19:00:00+01:00"}).encode()  # fmt: skip


async def post(router, body: bytes, headers=(), arrived=None) -> tuple[int, dict, dict]:
    sent: list = []
    chunks = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive():
        return chunks.pop(0)

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": "/api/entry/scan",
             "headers": [(b"x-device-key", b"sgd_k"), *headers]}  # fmt: skip
    if arrived is not None:
        scope[ARRIVED] = arrived  # as the served protocol stamps it (live.serving)
    await router(scope, receive, send)
    answer_headers = dict(sent[0]["headers"])
    return sent[0]["status"], json.loads(sent[1]["body"]), answer_headers


async def never_called(scope, receive, send):
    raise AssertionError("a scan must not reach the application behind the router")


@pytest.fixture
def one_scan_thread(monkeypatch):
    executor = ThreadPoolExecutor(1, thread_name_prefix="scan")
    monkeypatch.setattr(threads, "_threads", executor)
    monkeypatch.setattr(asgi.loop, "on_loop", lambda: False)  # the threads' path, on both DBs
    yield
    executor.shutdown(wait=True)


def test_scans_past_their_deadline_are_answered_503_and_those_still_queued_never_run(
    settings, monkeypatch, one_scan_thread
) -> None:
    settings.SAFEGROUND_SCAN_DEADLINE_SECONDS = 0.3
    settings.SAFEGROUND_RETRY_AFTER_SECONDS = 3
    started: list[float] = []
    release = threading.Event()

    def stuck(key, body):  # a scan thread waiting on a database that does not answer
        started.append(time.monotonic())
        release.wait(5)
        return 200, b'{"decision": "admit"}'

    monkeypatch.setattr(asgi, "scan_over_http", stuck)
    router = asgi.gates_router(never_called)

    async def three_at_once():
        began = time.monotonic()
        answers = await asyncio.gather(*(post(router, scan_body()) for _ in range(3)))
        return answers, time.monotonic() - began

    answers, took = asyncio.run(three_at_once())
    release.set()
    time.sleep(0.2)
    assert took < 0.3 + 0.25  # each within its deadline, not after the one ahead of it
    for status, answer, headers in answers:
        assert status == 503 and headers[b"retry-after"] == b"3"
        assert answer["code"] == "unavailable" and set(answer) == {"code", "field", "detail"}
    assert len(started) == 1  # the two queued behind the stuck one were dropped, not run late


def test_a_database_error_is_a_503_with_retry_after_not_a_500(settings, monkeypatch) -> None:
    def down(key, **kwargs):
        raise OperationalError("connection to server at 127.0.0.1 failed: Connection refused")

    monkeypatch.setattr(lookups, "device_for_key", down)
    status, answer = asgi.scan_over_http("sgd_k", scan_body())
    assert status == 503 and json.loads(answer)["code"] == "unavailable"

    def broken(key, **kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr(lookups, "device_for_key", broken)
    assert asgi.scan_over_http("sgd_k", scan_body())[0] == 500  # a fault of ours stays a 500


def test_a_50_mb_scan_is_refused_413_before_it_is_read(monkeypatch) -> None:
    monkeypatch.setattr(asgi, "scan_over_http", lambda key, body: pytest.fail("decided"))
    router = asgi.gates_router(never_called)
    received: list = []
    sent: list = []

    async def receive():
        received.append(1)
        return {"type": "http.request", "body": b"x" * 1024, "more_body": True}

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": "/api/entry/scan",
             "headers": [(b"content-length", str(50 * 2**20).encode())]}  # fmt: skip
    asyncio.run(router(scope, receive, send))
    assert received == []  # not one byte read
    assert sent[0]["status"] == 413
    answer = json.loads(sent[1]["body"])
    assert (answer["code"], answer["field"]) == ("too_large", "body")

    # No Content-Length (chunked): read up to the limit, then refused.
    sent.clear()
    asyncio.run(router(scope | {"headers": []}, receive, send))
    assert sent[0]["status"] == 413 and len(received) == asgi.MAX_BODY // 1024 + 1


def test_the_deadline_counts_from_the_requests_arrival_not_from_its_turn_on_the_loop(
    settings, monkeypatch, one_scan_thread
) -> None:
    """A scan that waited for a busy loop before the route ran is answered at its deadline from
    arrival (bench_faults: refusals at 2.10-2.25 s against a 2 s deadline)."""
    settings.SAFEGROUND_SCAN_DEADLINE_SECONDS = 0.5
    release = threading.Event()

    def stuck(key, body):
        release.wait(5)
        return 200, b'{"decision": "admit"}'

    monkeypatch.setattr(asgi, "scan_over_http", stuck)
    router = asgi.gates_router(never_called)

    async def late_for_the_loop():
        began = time.monotonic()
        answer = await post(router, scan_body(), arrived=began - 0.4)  # 0.4 s waiting already
        return answer, time.monotonic() - began

    (status, answer, _), took = asyncio.run(late_for_the_loop())
    release.set()
    assert status == 503 and answer["code"] == "unavailable"
    assert took < 0.1 + 0.1  # what was left of its 0.5 s, and a margin; not 0.5 s more


WELSH = [(b"accept-language", b"cy,en-GB;q=0.8")]


def test_the_outage_answers_are_in_the_stewards_language_same_codes(
    settings, monkeypatch, one_scan_thread
) -> None:
    """The 503, 500 and 413 a scanner shows are in the steward's language (the language cookie,
    else Accept-Language, as a scan's decision is); code and field stay the same."""
    router = asgi.gates_router(never_called)
    status, welsh, _ = asyncio.run(post(router, b"x" * (asgi.MAX_BODY + 1), WELSH))
    assert (status, welsh["code"], welsh["field"]) == (413, "too_large", "body")
    assert welsh["detail"] == f"mae sgan yn {asgi.MAX_BODY} beit ar y mwyaf"

    def broken(key, **kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr(lookups, "device_for_key", broken)
    status, failed, _ = asyncio.run(post(router, scan_body(), WELSH))
    assert (status, failed["code"]) == (500, "failed")
    assert failed["detail"] == "Ni ellid penderfynu ar y sgan: sganiwch eto."

    release = threading.Event()

    def stuck(key, body):  # past the deadline: answered by the router, not the scan thread
        release.wait(5)
        return 200, b'{"decision": "admit"}'

    settings.SAFEGROUND_SCAN_DEADLINE_SECONDS = 0.2
    original = asgi.scan_over_http
    monkeypatch.setattr(asgi, "scan_over_http", stuck)
    status, late, headers = asyncio.run(post(asgi.gates_router(never_called), scan_body(), WELSH))
    release.set()
    assert (status, late["code"], late["field"], headers[b"retry-after"]) == (
        503, "unavailable", "", b"2")  # fmt: skip
    assert late["detail"] == "Ni atebodd cronfa ddata'r gatiau mewn pryd: sganiwch eto."
    monkeypatch.setattr(asgi, "scan_over_http", original)

    def down(key, **kwargs):
        raise OperationalError("connection to server at 127.0.0.1 failed: Connection refused")

    monkeypatch.setattr(lookups, "device_for_key", down)
    settings.SAFEGROUND_SCAN_DEADLINE_SECONDS = 2
    assert asyncio.run(post(router, scan_body(), WELSH))[:2] == (503, late)
    cookie = [(b"cookie", b"django_language=cy")]
    assert asyncio.run(post(router, scan_body(), cookie))[:2] == (503, late)
    english = asyncio.run(post(router, scan_body()))[1]
    assert english == late | {"detail": "The gates' database did not answer in time: scan again."}


def test_the_outage_answers_are_built_once_per_language_not_per_scan() -> None:
    for language in ("cy", "en-gb"):
        assert asgi.fixed(language) is asgi.fixed(language)
    assert asgi.fixed("cy").unavailable[1] != asgi.fixed("en-gb").unavailable[1]
    assert asgi.fixed("fr") is asgi.fixed("en-gb")  # no catalogue: the source language's
