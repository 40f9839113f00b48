"""Sending alerts to push services, off the request's path.

pywebpush encrypts each message to its phone's keys (RFC 8291, aes128gcm) and posts it to the
phone's push service (RFC 8030) with `Urgency: high` and a short TTL; the VAPID token (RFC 8292)
is py-vapid's (vapid.py). Nothing of the protocol is written here: only who gets what, and what
the push service's answer means.

A service hands a batch of pushes to `send` once its write has committed; one of the process's
background threads (safeground.background) takes the batch and posts its messages concurrently
(aiohttp, on its own event loop, at most PUSH_CONCURRENCY at once), so a broadcast to 500 phones
returns at once. The answers: 2xx sent; 404 or 410 the subscription has expired (dropped); 429,
5xx or no answer tried again after a back-off, at most PUSH_ATTEMPTS times in all (a message is
worth nothing after its TTL); no thread waits out the back-off (background.later).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial

import aiohttp
from django.conf import settings
from pywebpush import WebPusher, WebPushException

from safeground import background

from . import vapid

logger = logging.getLogger(__name__)

EXPIRED = frozenset({404, 410})
BACK_OFF_SECONDS = (1.0, 4.0, 10.0)  # before the 2nd, 3rd, 4th attempt


@dataclass(frozen=True)
class Push:
    recipient_id: int  # the AlertRecipient it is for
    subscription_id: int
    endpoint: str
    p256dh: str
    auth: str
    payload: bytes
    attempt: int = 1


@dataclass(frozen=True)
class Outcome:
    push: Push
    status: int | None  # the push service's answer, None when there was none
    error: str = ""

    @property
    def sent(self) -> bool:
        return self.status is not None and 200 <= self.status < 300

    @property
    def expired(self) -> bool:
        return self.status in EXPIRED

    @property
    def retry(self) -> bool:
        transient = self.status is None or self.status == 429 or self.status >= 500
        return transient and not self.error.startswith("refused:")


Record = Callable[[list[Outcome]], None]


async def _post(session: aiohttp.ClientSession, gate: asyncio.Semaphore, push: Push) -> Outcome:
    """Encrypt and post one message; the push service's status, or why there was none."""
    subscription = {"endpoint": push.endpoint, "keys": {"p256dh": push.p256dh, "auth": push.auth}}
    headers = {**vapid.headers_for(push.endpoint), "Urgency": "high"}
    timeout = aiohttp.ClientTimeout(total=settings.SAFEGROUND_PUSH_TIMEOUT_SECONDS)
    async with gate:
        try:
            pusher = WebPusher(subscription, aiohttp_session=session)
            response = await pusher.send_async(
                push.payload, headers, ttl=settings.SAFEGROUND_PUSH_TTL_SECONDS, timeout=timeout
            )
        except (WebPushException, ValueError) as error:  # keys that are not a phone's: final
            return Outcome(push, None, f"refused: {error}"[:200])
        except (aiohttp.ClientError, TimeoutError) as error:
            return Outcome(push, None, type(error).__name__)
    return Outcome(push, response.status)


async def _post_all(pushes: list[Push]) -> list[Outcome]:
    """One round: every push at once, at most PUSH_CONCURRENCY in flight, on kept connections."""
    gate = asyncio.Semaphore(settings.SAFEGROUND_PUSH_CONCURRENCY)
    connector = aiohttp.TCPConnector(limit=settings.SAFEGROUND_PUSH_CONCURRENCY)
    async with aiohttp.ClientSession(connector=connector) as session:
        return await asyncio.gather(*(_post(session, gate, push) for push in pushes))


def _loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop when installed (uvicorn[standard] brings it): about half the loop's own cost."""
    try:
        import uvloop
    except ImportError:  # pragma: no cover
        return None
    return uvloop.new_event_loop


def deliver(pushes: list[Push], record: Record) -> None:
    """Post every push once and hand the outcomes to `record` (the database: outside the event
    loop); the transient failures are posted again after a back-off, on the background threads,
    at most PUSH_ATTEMPTS times in all."""
    outcomes = asyncio.run(_post_all(pushes), loop_factory=_loop_factory())
    record(outcomes)
    again = [o.push for o in outcomes if o.retry]
    attempt = again[0].attempt if again else 0
    if not again or attempt >= settings.SAFEGROUND_PUSH_ATTEMPTS:
        return
    retries = [replace(push, attempt=push.attempt + 1) for push in again]
    background.later(
        BACK_OFF_SECONDS[min(attempt - 1, len(BACK_OFF_SECONDS) - 1)],
        partial(_deliver_logged, retries, record),
        name="push alerts, tried again",
    )


def _deliver_logged(pushes: list[Push], record: Record) -> None:
    try:
        deliver(pushes, record)
    except Exception:
        logger.exception("push alerts: a batch of %d failed", len(pushes))


def send(pushes: list[Push], record: Record) -> None:
    """Deliver the pushes on a background thread; the caller returns at once."""
    if pushes:
        background.submit(partial(_deliver_logged, pushes, record), name="push alerts")
