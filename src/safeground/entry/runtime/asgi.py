"""The lean route for turnstile scans: `POST /api/entry/scan` answered before Django's request
machinery (twelve middlewares, ninja's operation) that costs more than the decision itself.

`gates_router(app)` wraps any ASGI app, as live.websocket.live_router does for sockets: a scan is
read here, checked against the cached device key and its profile, and decided by the same
service the ninja route calls (entry.scans.scan_decide); every other request goes to `app`.

A scan is decided from the event loop: device, turnstile and match from the process's caches,
then on PostgreSQL the one prepared statement on an async connection (runtime.loop.decide_async),
no hop to a thread and back; on SQLite the process's one writer, which decides the scans waiting
together in one transaction (runtime.one_writer). A scan that needs something not cached (a new
or expired key, turnstile or match) and the ORM path go whole to a scan thread that keeps its
Django connection (scan_over_http, entry.api.scan_answer). The answers are the same as the ninja
route's (tests/entry/test_asgi.py); the route stays in the OpenAPI schema through ninja.
docs/adr/0005-turnstile-decisions.md has the measurements.

    safeground.asgi wraps the whole application with it; at a big ground serve two workers:
    uvicorn safeground.asgi:application --workers 2 --no-access-log
"""

import asyncio
import functools
import json
import logging
import time
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, cast

from django.conf import settings
from django.db import connection
from django.http import HttpRequest
from django.http.cookie import parse_cookie
from django.utils import translation
from django.utils.translation import gettext

from safeground.accounts.devices import PROFILES
from safeground.disk_full import storage_full
from safeground.errors import ARRIVED, StorageFull, Unavailable, error_body
from safeground.lean_route import (
    ASGIApp,
    OverTheLimit,
    Receive,
    Scope,
    Send,
    answer,
    body_read,
    declared_over,
    is_post,
    too_large,
)
from safeground.outage import outage

from ..api import scan_answer, scan_answer_async
from . import lookups, loop, threads

logger = logging.getLogger(__name__)

SCAN_PATH = "/api/entry/scan"
ROUTE = "entry_scan"
MAX_BODY = 4096  # a scan is ~200 bytes

__all__ = ["Receive", "Scope", "Send", "gates_router"]  # safeground.asgi takes its types here


# The API's one error shape (safeground.errors), written here because this route bypasses ninja.
# The fixed answers are built once per language of settings.LANGUAGES (the first time one is
# needed, when the catalogues are loaded), not per scan: a scan's answer picks its language's.
@dataclass(frozen=True)
class FixedAnswers:
    unauthorized: tuple[int, bytes]
    # A fault of ours: the scanner scans again.
    failed: tuple[int, bytes]
    # The database did not answer within the scan's deadline (SAFEGROUND_SCAN_DEADLINE_SECONDS),
    # or is down: the turnstile scans again after Retry-After, with the same nonce, so a scan that
    # was stored meanwhile is answered once and never stored twice.
    unavailable: tuple[int, bytes]
    # The disk is full or the database refuses writes (safeground.disk_full): as unavailable.
    full: tuple[int, bytes]
    too_large: tuple[int, bytes]


def _answer_bytes(error: dict[str, Any]) -> bytes:
    return json.dumps(error).encode()


def _fixed_answers() -> FixedAnswers:
    """The fixed answers in the active language."""
    return FixedAnswers(
        unauthorized=(401, _answer_bytes(error_body("unauthorized", "", gettext("Unauthorized")))),
        failed=(
            500,
            _answer_bytes(
                error_body("failed", "", gettext("The scan could not be decided: scan again."))
            ),
        ),
        unavailable=(
            503,
            _answer_bytes(
                Unavailable(
                    "", gettext("The gates' database did not answer in time: scan again.")
                ).to_json()
            ),
        ),
        full=(
            503,
            _answer_bytes(
                StorageFull(
                    "",
                    gettext(
                        "The gates' database cannot store the scan (its disk is full): decide "
                        "it from the offline list and scan again later."
                    ),
                ).to_json()
            ),
        ),
        too_large=too_large(gettext("a scan is at most %(limit)s bytes") % {"limit": MAX_BODY}),
    )


@functools.cache
def _fixed_by_language() -> dict[str, FixedAnswers]:
    built = {}
    for language, _name in settings.LANGUAGES:
        with translation.override(language):
            built[language] = _fixed_answers()
    return built


def fixed(language: str | None) -> FixedAnswers:
    """The fixed answers in `language` (one of settings.LANGUAGES; else the source language's)."""
    answers = _fixed_by_language()
    return answers.get(language or "") or answers[settings.LANGUAGE_CODE]


def _in_this_language() -> FixedAnswers:
    """The fixed answers in the language the scan is being answered in (scan_in_language, or the
    router's override on the loop): read only when a scan fails or is refused."""
    return fixed(translation.get_language())


def _forbidden(device: lookups.DeviceInfo) -> tuple[int, bytes] | None:
    if ROUTE in PROFILES.get(device.profile, frozenset()):
        return None
    detail = gettext("A %(profile)s device may not call %(route)s.") % {
        "profile": device.profile_label,
        "route": ROUTE,
    }
    return 403, json.dumps(error_body("forbidden", "", detail)).encode()


def scan_over_http(key: str | None, body: bytes) -> tuple[int, bytes]:
    """Auth as CachedDeviceKey does, then the scan; runs on a scan thread (it uses Django's
    database connection)."""
    # The thread keeps its connection from scan to scan (returning it to the pool and taking
    # it back costs more than the decision); one that failed is dropped, as Django would.
    try:
        device = lookups.device_for_key(key) if key else None
        if device is None:
            return _in_this_language().unauthorized
        return _forbidden(device) or scan_answer(device, body)
    except Exception as error:
        connection.close()
        if storage_full(error):  # not an outage: the database answers, but stores nothing
            return _in_this_language().full
        if isinstance(error, loop.DATABASE_DOWN):
            outage.refused(error)  # one line for the outage, not one per scan
            return _in_this_language().unavailable
        logger.exception("scan failed")
        return _in_this_language().failed


def scan_language(cookie: str, accept: str) -> str:
    """The language of a scan's answer, as LocaleMiddleware chooses a page's (this route runs
    before it): the steward's choice (the language cookie), else their browser's."""
    if not cookie and not accept:
        return settings.LANGUAGE_CODE
    asked = SimpleNamespace(COOKIES=parse_cookie(cookie), META={"HTTP_ACCEPT_LANGUAGE": accept})
    return translation.get_language_from_request(cast(HttpRequest, asked))


def scan_in_language(language: str, key: str | None, body: bytes) -> tuple[int, bytes]:
    """scan_over_http, answering in `language` (on a scan thread: the loop's is not there)."""
    with translation.override(language):
        return scan_over_http(key, body)


async def scan_on_loop(key: str | None, body: bytes) -> tuple[int, bytes] | None:
    """The scan decided on the event loop, or None when it must go to a scan thread (something
    it needs is not cached; nothing was written)."""
    try:
        device = lookups.device_for_key(key, cached_only=True) if key else None
        if device is None:
            return _in_this_language().unauthorized
        return _forbidden(device) or await scan_answer_async(device, body)
    except lookups.NotCached:
        return None
    except Exception as error:
        if storage_full(error):
            return _in_this_language().full
        if not isinstance(error, loop.DATABASE_DOWN):
            logger.exception("scan failed")
            return _in_this_language().failed
        outage.refused(error)  # one line for the outage, not one per scan
        return _in_this_language().unavailable
    finally:
        for reload in lookups.reloads_due():
            threads.in_scan_thread_soon(reload)


async def _answer(send: Send, status: int, body: bytes, retry_after: bytes) -> None:
    await answer(send, status, body, [(b"retry-after", retry_after)] if status == 503 else ())


def gates_router(app: ASGIApp) -> ASGIApp:
    # Each scan has its own deadline, from its arrival: one that waits behind a stuck statement
    # or for a connection while the database is away is answered 503 at its deadline, and, if it
    # was still waiting, is never decided (the group commit leaves it out; a scan thread never
    # starts it). Read once: the router is made once per process.
    deadline = settings.SAFEGROUND_SCAN_DEADLINE_SECONDS
    retry_after = str(settings.SAFEGROUND_RETRY_AFTER_SECONDS).encode()

    async def router(scope: Scope, receive: Receive, send: Send) -> None:
        if not is_post(scope, SCAN_PATH):
            await app(scope, receive, send)
            return
        key = None
        cookie = accept = ""
        declared_too_large = False
        for name, value in scope["headers"]:
            if name == b"x-device-key":
                key = value.decode("latin-1")
            elif name == b"cookie":
                cookie = value.decode("latin-1")
            elif name == b"accept-language":
                accept = value.decode("latin-1")
            elif name == b"content-length" and declared_over(value, MAX_BODY):
                declared_too_large = True
        language = scan_language(cookie, accept)
        if declared_too_large:  # refused before it is read (a 50 MB body is not received at all)
            await _answer(send, *fixed(language).too_large, retry_after)
            return
        body = await body_read(receive, MAX_BODY)
        if body is None:
            return
        if isinstance(body, OverTheLimit):
            await _answer(send, *fixed(language).too_large, retry_after)
            return
        if outage.refusing:  # known or found to be away: refused at once (safeground.outage)
            outage.refused("database away")
            await _answer(send, *fixed(language).unavailable, retry_after)
            return
        # From the request's arrival (live.serving stamps it): the time it waited for the loop
        # before this ran counts too (bench_faults: refusals at 2.10-2.25 s against 2 s).
        waited = time.monotonic() - scope.get(ARRIVED, time.monotonic())
        try:
            async with asyncio.timeout(max(0.0, deadline - waited)):
                with translation.override(language):
                    answered = await scan_on_loop(key, body) if loop.on_loop() else None
                if answered is None:
                    answered = await threads.in_scan_thread(scan_in_language, language, key, body)
        except TimeoutError:
            answered = fixed(language).unavailable
        await _answer(send, *answered, retry_after)

    return router
