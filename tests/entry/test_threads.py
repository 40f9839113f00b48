"""The scan threads keep their Django connection; a worker shutting down closes them all."""

import asyncio

import pytest
from django.db import connections

from safeground.entry.runtime import threads


@pytest.mark.django_db(transaction=True)
def test_shutdown_closes_the_connections_the_scan_threads_kept() -> None:
    # Found by the schema fuzzing's lifespan shutdown: closing them on the event loop raised
    # SynchronousOnlyOperation, so the worker's shutdown failed after any scan had used a thread.
    def open_one() -> object:
        connections["default"].ensure_connection()
        return connections["default"]  # this thread's own

    async def scan_then_shut_down() -> object:
        kept = await threads.in_scan_thread(open_one)
        await threads.scan_threads_close()
        return kept

    kept = asyncio.run(scan_then_shut_down())
    # Django never closes SQLite's in-memory test database; any other is closed.
    assert kept.connection is None or kept.is_in_memory_db()  # type: ignore[attr-defined]
    assert threads._thread_connections == []
