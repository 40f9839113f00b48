"""The server's VAPID key (RFC 8292): push services take a message only with a token signed by
the key a phone subscribed with, so a stolen endpoint alone cannot push to a steward's phone.

Kept as the server's signing key is (safeground/signing.py): SAFEGROUND_VAPID_PRIVATE_KEY (the
base64url of a 32-byte P-256 private key, printed by `safeground vapidkey`), or, unset, derived
from SECRET_KEY, so every process of a deployment signs with one key and it survives restarts.
Changing it unsubscribes every phone: push services refuse tokens of another key.
"""

import time
from functools import lru_cache
from urllib.parse import urlsplit

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from py_vapid import Vapid02

from safeground.signing import b64url, b64url_decode

HKDF_INFO = b"safeground web push vapid key v1"
# A token lives 12 hours (RFC 8292 allows 24); a fresh one is made an hour before it ends.
TOKEN_SECONDS = 12 * 3600
RENEW_SECONDS = 3600
# P-256's group order: a derived 32-byte seed is reduced into the valid range of private keys.
_ORDER = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551


@lru_cache(maxsize=4)
def _vapid(configured: str, secret_key: str) -> Vapid02:
    if configured:
        try:
            raw = b64url_decode(configured)
        except ValueError:
            raw = b""
        if len(raw) != 32:
            raise ImproperlyConfigured(
                "SAFEGROUND_VAPID_PRIVATE_KEY must be the base64url of a 32-byte P-256 private"
                " key (`safeground vapidkey` prints a new one)"
            )
        number = int.from_bytes(raw, "big")
    else:
        seed = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=HKDF_INFO).derive(
            secret_key.encode()
        )
        number = int.from_bytes(seed, "big") % (_ORDER - 1) + 1
    return Vapid02(ec.derive_private_key(number, ec.SECP256R1()))


def vapid() -> Vapid02:
    return _vapid(settings.SAFEGROUND_VAPID_PRIVATE_KEY, settings.SECRET_KEY)


def public_key() -> str:
    """The applicationServerKey a phone subscribes with (base64url, uncompressed point)."""
    point = vapid().public_key.public_bytes(Encoding.X962, PublicFormat.UncompressedPoint)
    return b64url(point)


def new_private_key() -> str:
    number = ec.generate_private_key(ec.SECP256R1()).private_numbers().private_value
    return b64url(number.to_bytes(32, "big"))


_tokens: dict[str, tuple[float, dict[str, str]]] = {}


def headers_for(endpoint: str) -> dict[str, str]:
    """The Authorization header for a push service (its origin is the token's audience): one
    signature per push service per ~11 hours, not one per message."""
    parts = urlsplit(endpoint)
    audience = f"{parts.scheme}://{parts.netloc}"
    now = time.time()
    kept = _tokens.get(audience)
    if kept is None or kept[0] - RENEW_SECONDS < now:
        expires = int(now) + TOKEN_SECONDS
        claims = {"aud": audience, "exp": expires, "sub": settings.SAFEGROUND_VAPID_SUBJECT}
        kept = (expires, vapid().sign(claims))
        _tokens[audience] = kept
    return dict(kept[1])
