"""Casework tests: the factories' match day (no demo), a turnstile key and a scan helper."""

import uuid
from collections.abc import Callable
from datetime import timedelta

import pytest
from django.test import Client

from tests import factories


@pytest.fixture
def scan(match_day) -> Callable[..., dict]:
    """A scan at a turnstile of the ground through the scan API, as a turnstile sends it."""
    _, key = factories.device(match_day.cast.home)

    def scan(barcode: str, *, fixture=None, turnstile: str = "F03") -> dict:
        fixture = fixture or match_day.cup_tie
        return (
            Client()
            .post(
                "/api/entry/scan",
                {
                    "barcode": barcode,
                    "turnstile": turnstile,
                    "scanned_at": (fixture.kickoff - timedelta(minutes=40)).isoformat(),
                    "nonce": str(uuid.uuid4()),
                },
                content_type="application/json",
                headers={"X-Device-Key": key},
            )
            .json()
        )

    return scan
