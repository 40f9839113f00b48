"""Requests between a club and the exchange are signed with the club's Ed25519 key (the key the
log's checkpoints and the scanners' bundles use, safeground.signing): the method, path, time and
body's SHA-256, so a request cannot be replayed to another route or altered, and is refused once
older than SKEW_SECONDS; and a random nonce, which the exchange remembers for as long as the
request is valid (exchange.SeenRequest), so the same request sent twice is refused."""

import hashlib
import re
import secrets
import time

from django.utils.translation import gettext as _

from safeground import signing

KEY = "X-Safeground-Key"
TIME = "X-Safeground-Time"
SIGNATURE = "X-Safeground-Signature"
NONCE = "X-Safeground-Nonce"
SKEW_SECONDS = 300
NONCE_PATTERN = re.compile(r"^[0-9a-f]{32}$")


def signed_bytes(method: str, path: str, at: str, nonce: str, body: bytes) -> bytes:
    parts = [method.upper(), path, at, nonce, hashlib.sha256(body).hexdigest()]
    return "\n".join(parts).encode()


def headers(method: str, path: str, body: bytes) -> dict[str, str]:
    """The headers a club's request carries."""
    at, nonce = str(int(time.time())), secrets.token_hex(16)
    signature, key_id = signing.sign(signed_bytes(method, path, at, nonce, body))
    return {KEY: key_id, TIME: at, NONCE: nonce, SIGNATURE: signing.b64url(signature)}


def verify(
    *, method: str, path: str, at: str, nonce: str, body: bytes, signature: str, public_key: str
) -> str:
    """'' when the signature is the key's over this request and recent, else what is wrong.
    Whether the nonce was seen before is the exchange's store's to say (services.club_of)."""
    if not at.isdigit() or abs(time.time() - int(at)) > SKEW_SECONDS:
        return _("%(header)s must be the time now (seconds since 1970, within %(skew)s s)") % {
            "header": TIME,
            "skew": SKEW_SECONDS,
        }
    if not NONCE_PATTERN.match(nonce):
        return _("%(header)s must be 32 hex digits, new for every request") % {"header": NONCE}
    try:
        raw_signature = signing.b64url_decode(signature)
        raw_key = signing.b64url_decode(public_key)
    except ValueError:
        return _("%(header)s is not base64url") % {"header": SIGNATURE}
    if not signing.verify(signed_bytes(method, path, at, nonce, body), raw_signature, raw_key):
        return _("the signature does not verify with the enrolled key")
    return ""
