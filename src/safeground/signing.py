"""The server's one Ed25519 signing key: it signs scanners' offline bundles and the log's
checkpoints, and anyone holding its public key can check either without the database.

It lives below every app because two sibling apps sign with it (entry's bundles, the log's
checkpoints in incidents) and neither may import the other. The key's derivation has not changed
since it was entry's: scanners trusting the key they were given keep trusting it.
"""

import base64
import hashlib
import json
from functools import lru_cache
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

# Changing it changes the key derived from SECRET_KEY, and so every scanner's trusted key and
# every checkpoint's signer.
HKDF_INFO = b"safeground offline bundle signing key v1"


def b64url(data: bytes) -> str:
    """base64url without padding (RFC 4648 section 5), as the scanner page decodes it."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64url_decode(text: str) -> bytes:
    """The reverse of b64url; ValueError for anything that is not base64url."""
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def canonical_json(payload: dict[str, Any]) -> bytes:
    """The bytes that are signed: sorted keys, no spaces, ASCII only, so a reader in any language
    rebuilds the same bytes from the parsed JSON."""
    return json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


@lru_cache(maxsize=4)
def _private_key(seed_b64: str, secret_key: str) -> Ed25519PrivateKey:
    if seed_b64:
        try:
            seed = base64.b64decode(seed_b64, validate=True)
        except ValueError:
            seed = b""
        if len(seed) != 32:
            raise ImproperlyConfigured(
                "SAFEGROUND_BUNDLE_SIGNING_KEY must be the base64 of 32 random bytes"
                " (e.g. `python -c 'import os,base64; print(base64.b64encode(os.urandom(32))"
                ".decode())'`)"
            )
    else:
        # Unset (the demo, tests): derived from SECRET_KEY, so it survives restarts and every
        # process of a deployment signs with the same key.
        seed = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=HKDF_INFO).derive(
            secret_key.encode()
        )
    return Ed25519PrivateKey.from_private_bytes(seed)


def signing_key() -> Ed25519PrivateKey:
    return _private_key(settings.SAFEGROUND_BUNDLE_SIGNING_KEY, settings.SECRET_KEY)


def public_key_raw() -> bytes:
    return signing_key().public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)


def key_id(public_key: bytes) -> str:
    return hashlib.sha256(public_key).hexdigest()[:16]


def public_key_json() -> dict[str, str]:
    raw = public_key_raw()
    return {"key_id": key_id(raw), "public_key": b64url(raw)}


def sign(data: bytes) -> tuple[bytes, str]:
    """(signature, key id) of `data` under the server's key."""
    private = signing_key()
    raw = private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    return private.sign(data), key_id(raw)


def verify(data: bytes, signature: bytes, public_key: bytes | None = None) -> bool:
    """Whether `signature` is the server's (or the given public key's) over `data`."""
    raw = public_key_raw() if public_key is None else public_key
    try:
        Ed25519PublicKey.from_public_bytes(raw).verify(signature, data)
    except (InvalidSignature, ValueError):
        return False
    return True
