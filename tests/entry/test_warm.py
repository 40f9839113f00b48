"""A process warms its scan caches and pools before it listens (entry.runtime.warm, run by the
ASGI lifespan's startup): its first scan is decided from the caches, not sent to a thread to
load them (bench_faults: a restarted process queued its first scans behind those loads)."""

import asyncio
import uuid

import pytest
from django.db import connection

from safeground.entry.runtime import lookups, loop, threads
from safeground.entry.runtime.warm import warm_up
from safeground.entry.scans import scan_check

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_warmed_process_decides_its_first_scan_from_its_caches(gates) -> None:
    now = gates.before_kickoff

    def first_scan_cached() -> None:
        scan_check(device=lookups.device_for_key(gates.key, cached_only=True),  # type: ignore[arg-type]
                   turnstile="F03", barcode="AWAY-1", scanned_at=now, nonce=uuid.uuid4(),
                   now=now, cached_only=True)  # fmt: skip

    with pytest.raises(lookups.NotCached):
        first_scan_cached()  # cold: the loop would send this scan to a thread

    async def start() -> bool:
        try:
            await warm_up(now=now)  # the matches whose gates are open then
            if connection.vendor != "postgresql":
                return True  # SQLite's writer opens its connection at its first batch
            pool = loop._batches[1].pool  # type: ignore[index]
            return pool.get_stats()["pool_available"] >= loop.CONNECTIONS
        finally:
            await loop.scan_pool_close()
            await threads.scan_threads_close()

    assert asyncio.run(start())
    first_scan_cached()  # every lookup answered from the caches
    connection.close()
