"""A push service on 127.0.0.1 for the tests and the benchmark (this machine reaches no real one).

It speaks what a browser's push service speaks to an application server (RFC 8030): a POST to a
subscription's endpoint with a `TTL` header (and `Urgency`), answered 201 Created with a
Location; 404 for an endpoint it does not know, 410 for one that has expired. Each message is
checked for real: the VAPID token (RFC 8292, `vapid t=JWT,k=KEY`) must be signed by the key it
names (py-vapid checks the ES256 signature), name this service as its audience, not have
expired, and carry the expected server key when one is given; the body must decrypt (RFC 8291,
aes128gcm, `http_ece`) with the subscription's own private key and authentication secret, which
only the "phone" (a `Phone` here) holds. What arrived is kept in `messages`, and `on_message`
(if set) is called with each, in the receiver's thread (aiohttp's server on an event loop of its
own): the benchmark answers as the phone's service worker would.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import secrets
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import http_ece
from aiohttp import web
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from py_vapid import Vapid02

URGENCIES = {"very-low", "low", "normal", "high"}


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass
class Phone:
    """One browser's subscription: the keys the server encrypts to, which only it can read."""

    token: str
    endpoint: str
    private_key: ec.EllipticCurvePrivateKey
    auth: bytes

    @property
    def p256dh(self) -> str:
        point = self.private_key.public_key().public_bytes(
            Encoding.X962, PublicFormat.UncompressedPoint
        )
        return b64url(point)

    def subscription(self) -> dict[str, Any]:
        """As PushSubscription.toJSON() gives it."""
        return {
            "endpoint": self.endpoint,
            "keys": {"p256dh": self.p256dh, "auth": b64url(self.auth)},
        }


@dataclass
class Message:
    phone: Phone
    received_at: float  # time.monotonic()
    ttl: int
    urgency: str
    claims: dict[str, Any]
    payload: bytes

    def json(self) -> dict[str, Any]:
        return json.loads(self.payload)


@dataclass
class PushReceiver:
    server_key: str | None = None  # the VAPID public key (base64url) a token must carry
    phones: dict[str, Phone] = field(default_factory=dict)
    messages: list[Message] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # why each refused POST was refused
    expired: set[str] = field(default_factory=set)
    failing: dict[str, list[int]] = field(default_factory=dict)  # token -> statuses to answer
    connections: set[Any] = field(default_factory=set)  # the senders' (host, port): kept-alive?
    on_message: Any = None

    def __post_init__(self) -> None:
        self.lock = threading.Lock()
        self.arrived = threading.Condition(self.lock)
        self.verified: dict[str, dict[str, Any]] = {}  # token -> its claims, signature checked
        ready = threading.Event()
        self.thread = threading.Thread(target=self._serve, args=(ready,), daemon=True)
        self.thread.start()
        if not ready.wait(10):
            raise RuntimeError("the push receiver did not start")
        self.origin = f"http://127.0.0.1:{self.port}"

    def _serve(self, ready: threading.Event) -> None:
        """The receiver's own thread and event loop (the caller's thread may have one running:
        Playwright's)."""
        try:
            import uvloop

            self.loop: asyncio.AbstractEventLoop = uvloop.new_event_loop()
        except ImportError:
            self.loop = asyncio.new_event_loop()
        asyncio.set_event_loop(self.loop)
        app = web.Application()
        app.router.add_post("/push/{token}", self.handle)
        self.runner = web.AppRunner(app, access_log=None)
        self.loop.run_until_complete(self.runner.setup())
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        self.loop.run_until_complete(site.start())
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        ready.set()
        self.loop.run_forever()

    def close(self) -> None:
        asyncio.run_coroutine_threadsafe(self.runner.cleanup(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)

    def phone(self) -> Phone:
        token = secrets.token_urlsafe(16)
        made = Phone(
            token=token,
            endpoint=f"{self.origin}/push/{token}",
            private_key=ec.generate_private_key(ec.SECP256R1()),
            auth=os.urandom(16),
        )
        with self.lock:
            self.phones[token] = made
        return made

    def wait_for(self, count: int, timeout: float = 10.0) -> list[Message]:
        """The first `count` messages, once they have come (AssertionError after `timeout`)."""
        deadline = time.monotonic() + timeout
        with self.arrived:
            while len(self.messages) < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(
                        f"{len(self.messages)} of {count} pushes came; refused: {self.refused[:3]}"
                    )
                self.arrived.wait(left)
            return list(self.messages[:count])

    async def handle(self, request: web.Request) -> web.Response:
        body = await request.read()
        token = request.match_info["token"]
        peer = request.transport.get_extra_info("peername") if request.transport else None
        with self.lock:
            self.connections.add(peer)
            phone = self.phones.get(token)
            failing = self.failing.get(token)
            status = failing.pop(0) if failing else None
        if phone is None:
            return web.Response(status=404, text="no such subscription")
        if token in self.expired:
            return web.Response(status=410, text="subscription expired")
        if status is not None:
            return web.Response(status=status, text="told to fail")
        try:
            message = self.receive(phone, request.headers, body)
        except Exception as error:  # every refusal is kept, with why, for the test to read
            with self.lock:
                self.refused.append(f"{type(error).__name__}: {error}")
            return web.Response(status=400, text=str(error))
        with self.arrived:
            self.messages.append(message)
            self.arrived.notify_all()
        if self.on_message is not None:
            self.on_message(message)
        location = f"/message/{secrets.token_urlsafe(8)}"
        return web.Response(status=201, headers={"Location": location})

    # --- what the push service checks ---------------------------------------------------------

    def check_token(self, authorization: str) -> dict[str, Any]:
        """The VAPID token's claims, once its signature, key, audience and expiry are good."""
        scheme, _, rest = authorization.partition(" ")
        if scheme.lower() != "vapid":
            raise ValueError(f"Authorization scheme {scheme!r}, not vapid")
        parts = dict(item.split("=", 1) for item in rest.split(","))
        if self.server_key is not None and parts.get("k") != self.server_key:
            raise ValueError("the token names another server key than the subscription's")
        claims = self.verified.get(parts["t"])
        if claims is None:  # a token is checked once, as push services do, then its claims kept
            if not Vapid02.verify(authorization):
                raise ValueError("the token's signature does not verify against its key")
            claims = json.loads(b64url_decode(parts["t"].split(".")[1]))
            self.verified[parts["t"]] = claims
        if claims.get("aud") != self.origin:
            raise ValueError(f"audience {claims.get('aud')!r}, not {self.origin}")
        if int(claims.get("exp", 0)) <= time.time() or int(claims["exp"]) > time.time() + 86400:
            raise ValueError("the token has expired, or lives longer than 24 hours")
        if not str(claims.get("sub", "")).startswith(("mailto:", "https:")):
            raise ValueError("no contact (sub) in the token")
        return claims

    def receive(self, phone: Phone, headers: Any, body: bytes) -> Message:
        if headers.get("TTL") is None or not headers["TTL"].isdigit():
            raise ValueError("no TTL header")
        urgency = headers.get("Urgency", "normal")
        if urgency not in URGENCIES:
            raise ValueError(f"Urgency {urgency!r}")
        if headers.get("Content-Encoding") != "aes128gcm":
            raise ValueError(f"Content-Encoding {headers.get('Content-Encoding')!r}")
        claims = self.check_token(headers.get("Authorization", ""))
        payload = http_ece.decrypt(
            body, private_key=phone.private_key, auth_secret=phone.auth, version="aes128gcm"
        )
        return Message(phone, time.monotonic(), int(headers["TTL"]), urgency, claims, payload)
