"""The oblivious PRF: RFC 9497's VOPRF over Ristretto255 from the `voprf` library
(docs/adr/0015-league-ban-exchange.md). Nothing of the cryptography is written here: the club
blinds and finalizes, the exchange evaluates, each with the library's own calls.

The club learns F(k, x) for its own inputs x and nothing of k; the exchange sees only blinded
elements, uniformly random to it, and returns them evaluated with a batch proof that it used the
one key whose public key every club pins.
"""

import base64
from collections.abc import Sequence
from functools import lru_cache

from voprf import ristretto

# The library's batch limit is 2^16 - 1; smaller batches keep each request body small.
BATCH = 4096
KEY_INFO = b"safeground league ban exchange oprf key v1"


class OprfRefused(ValueError):
    """An element that is not a Ristretto255 point, or a proof that does not verify."""


def _seed() -> bytes:
    # Imported here: the club's blinding workers import this module for blind and finalize
    # only, and Django's settings would add a fifth of a second to each one's start.
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF
    from django.conf import settings

    configured = settings.SAFEGROUND_EXCHANGE_OPRF_SEED
    if configured:
        seed = base64.b64decode(configured)
        if len(seed) != 32:
            raise ValueError("SAFEGROUND_EXCHANGE_OPRF_SEED must be the base64 of 32 bytes")
        return seed
    # Unset (tests, a trial): derived from SECRET_KEY, so it survives restarts.
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=KEY_INFO).derive(
        settings.SECRET_KEY.encode()
    )


@lru_cache(maxsize=2)
def _evaluator(seed: bytes) -> ristretto.Evaluator:
    return ristretto.Evaluator.from_seed(seed, KEY_INFO)


def evaluator() -> ristretto.Evaluator:
    """The exchange's key (the exchange role only)."""
    return _evaluator(_seed())


def public_key() -> bytes:
    return evaluator().public_key.serialize()


def blind(inputs: Sequence[bytes]) -> tuple[list[ristretto.Client], list[bytes]]:
    """The club's side: each input blinded; the clients are kept to finalize."""
    clients, blinded = [], []
    for item in inputs:
        client, element = ristretto.Client.blind(item)
        clients.append(client)
        blinded.append(element.serialize())
    return clients, blinded


def evaluate(blinded: Sequence[bytes]) -> bytes:
    """The exchange's side: a batch of blinded elements evaluated, with one proof."""
    try:
        elements = [ristretto.BlindedInput.deserialize(item) for item in blinded]
        return evaluator().evaluate_batch(elements).serialize()
    except ValueError as refused:
        raise OprfRefused(str(refused)) from refused


def finalize(clients: list[ristretto.Client], output: bytes, key: bytes) -> list[bytes]:
    """The club's side: the batch unblinded, its proof checked against the pinned public key."""
    try:
        batch = ristretto.VerifiableBatchOutput.deserialize(output)
        return ristretto.Client.finalize_batch(clients, batch, ristretto.PublicKey.deserialize(key))
    except ValueError as refused:
        raise OprfRefused(str(refused)) from refused
    except BaseException as panicked:
        # voprf 0.2.0 panics (pyo3's PanicException, a BaseException) on a well-formed proof
        # made with another key: that is a forged or wrong evaluation, refused like the rest.
        if type(panicked).__name__ != "PanicException":
            raise
        raise OprfRefused(f"the proof does not verify ({panicked})") from panicked
