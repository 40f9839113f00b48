"""Requests between a club and the exchange are signed with the club's Ed25519 key (the key the
log's checkpoints and the scanners' bundles use, safeground.signing): the method, path, time and
body's SHA-256, so a request cannot be replayed to another route or altered, and is refused once
older than SKEW_SECONDS."""

import hashlib
import time

from safeground import signing

KEY = "X-Safeground-Key"
TIME = "X-Safeground-Time"
SIGNATURE = "X-Safeground-Signature"
SKEW_SECONDS = 300


def signed_bytes(method: str, path: str, at: str, body: bytes) -> bytes:
    return "\n".join([method.upper(), path, at, hashlib.sha256(body).hexdigest()]).encode()


def headers(method: str, path: str, body: bytes) -> dict[str, str]:
    """The headers a club's request carries."""
    at = str(int(time.time()))
    signature, key_id = signing.sign(signed_bytes(method, path, at, body))
    return {KEY: key_id, TIME: at, SIGNATURE: signing.b64url(signature)}


def verify(*, method: str, path: str, at: str, body: bytes, signature: str, public_key: str) -> str:
    """'' when the signature is the key's over this request and recent, else what is wrong."""
    if not at.isdigit() or abs(time.time() - int(at)) > SKEW_SECONDS:
        return f"{TIME} must be the time now (seconds since 1970, within {SKEW_SECONDS} s)"
    try:
        raw_signature = signing.b64url_decode(signature)
        raw_key = signing.b64url_decode(public_key)
    except ValueError:
        return f"{SIGNATURE} is not base64url"
    if not signing.verify(signed_bytes(method, path, at, body), raw_signature, raw_key):
        return "the signature does not verify with the enrolled key"
    return ""
