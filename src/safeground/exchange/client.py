"""A club's calls to the exchange (SAFEGROUND_EXCHANGE_URL), each signed (exchange/signed.py).
An answer other than 2xx is an ExchangeUnreachable or ExchangeRefused naming what it said."""

import json
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.utils.translation import gettext as _

from safeground.errors import SafegroundError

from . import signed

TIMEOUT_SECONDS = 60


class ExchangeRefused(SafegroundError):
    """The exchange refused the request (its code and detail are passed on)."""

    code = "league_exchange_refused"
    status = 502


class ExchangeBusy(ExchangeRefused):
    """The exchange refused a bound passed (its 429), passed on as such."""

    status = 429


class ExchangeUnreachable(SafegroundError):
    """No exchange configured, or it did not answer."""

    code = "exchange_unreachable"
    status = 503


class NoExchange(ExchangeUnreachable):
    """This club is in no league's exchange (SAFEGROUND_EXCHANGE_URL is not set)."""

    status = 404


class ExchangeClient:
    def __init__(self, base_url: str | None = None) -> None:
        self.base_url = (base_url or settings.SAFEGROUND_EXCHANGE_URL).rstrip("/")
        if not self.base_url:
            raise NoExchange(
                "exchange",
                _("this club is not in a league's exchange (SAFEGROUND_EXCHANGE_URL is not set)"),
            )

    def call(self, method: str, route: str, payload: dict[str, Any] | None = None) -> Any:
        return self._call(method, route, payload)[1]

    def _call(
        self, method: str, route: str, payload: dict[str, Any] | None = None, *, etag: str = ""
    ) -> tuple[str, Any]:
        """(the answer's ETag, its JSON); with `etag`, a 304 is (etag, None)."""
        path = f"/api/exchange/{route.lstrip('/')}"
        body = json.dumps(payload).encode() if payload is not None else b""
        request = urllib.request.Request(
            self.base_url + path,
            data=body if payload is not None else None,
            method=method,
            headers={"Content-Type": "application/json", **signed.headers(method, path, body),
                     **({"If-None-Match": etag} if etag else {})},
        )  # fmt: skip
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as answer:
                return answer.headers.get("ETag", ""), json.loads(answer.read() or b"null")
        except urllib.error.HTTPError as refused:
            if etag and refused.code == 304:
                return etag, None
            try:
                said = json.loads(refused.read())
            except ValueError:
                said = {}
            passed_on = ExchangeBusy if refused.code == 429 else ExchangeRefused
            raise passed_on(
                str(said.get("field", "")),
                _("the exchange answered %(status)s: %(detail)s")
                % {"status": refused.code, "detail": said.get("detail", refused.reason)},
            ) from refused
        except (urllib.error.URLError, TimeoutError, OSError) as away:
            raise ExchangeUnreachable("exchange", f"{self.base_url}: {away}") from away

    def get(self, route: str) -> Any:
        return self.call("GET", route)

    def get_if_changed(self, route: str, etag: str) -> tuple[str, Any]:
        """(its ETag, the answer), or (etag, None) when the exchange says it has not changed."""
        return self._call("GET", route, etag=etag)

    def post(self, route: str, payload: dict[str, Any]) -> Any:
        return self.call("POST", route, payload)


def evaluation_at(client: ExchangeClient, route: str) -> Callable[[list[bytes]], bytes]:
    """The exchange's evaluation of a batch of blinded elements, over its signed route."""

    def evaluate(blinded: list[bytes]) -> bytes:
        answer = client.post(route, {"blinded": [element.hex() for element in blinded]})
        return bytes.fromhex(answer["evaluated"])

    return evaluate


def exchange_key(client: ExchangeClient) -> bytes:
    """The exchange's OPRF public key: the pinned one (SAFEGROUND_EXCHANGE_PUBLIC_KEY), or as
    it gives it."""
    pinned = settings.SAFEGROUND_EXCHANGE_PUBLIC_KEY
    return bytes.fromhex(pinned or client.get("key")["public_key"])
