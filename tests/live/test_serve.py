"""`safeground serve`: more than one process only with Redis between them."""

import pytest
from django.core.management import CommandError, call_command


def test_two_workers_without_redis_are_refused(settings) -> None:
    settings.REDIS_URL = ""
    with pytest.raises(CommandError, match="--workers: more than one process needs REDIS_URL"):
        call_command("serve", "--workers", "2")


def test_no_workers_is_refused() -> None:
    with pytest.raises(CommandError, match="--workers: at least 1"):
        call_command("serve", "--workers", "0")


def test_the_served_application_keeps_start_up_out_of_the_collectors_passes() -> None:
    # The live p99 depends on it (ADR 0002, Update 3): start-up's objects frozen, young passes
    # ten times rarer than Python's default.
    import gc

    from safeground import asgi

    assert gc.get_freeze_count() > 10_000
    assert gc.get_threshold() == asgi.GC_THRESHOLDS
