"""The scan threads: what the event loop cannot do itself (cache misses, the ORM path, a banned
holder's announcement) runs on a few threads per process, each keeping its Django
connection from scan to scan (returning it to the pool and taking it back costs more than the
decision)."""

import asyncio
import contextlib
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from django.db import Error, connection, connections

# Threads per process for what the loop cannot do itself (cache misses, the ORM path);
# each keeps its Django connection from scan to scan.
THREADS = max(1, int(os.environ.get("SAFEGROUND_ENTRY_THREADS", "8")))

_threads: ThreadPoolExecutor | None = None
_thread_connections: list[Any] = []  # each scan thread's Django connection, closed at shutdown


def _in_thread[T](work: Callable[..., T], *args: Any) -> T:
    try:
        return work(*args)
    except Error:
        connection.close()  # this thread's connection failed: drop it, as Django would
        raise


def _scan_threads() -> ThreadPoolExecutor:
    global _threads
    if _threads is None:
        _threads = ThreadPoolExecutor(
            THREADS, thread_name_prefix="scan", initializer=_remember_connection
        )
    return _threads


async def in_scan_thread[T](work: Callable[..., T], *args: Any) -> T:
    """`work(*args)` on one of the process's scan threads, which keep their Django connection."""
    threads = _scan_threads()
    return await asyncio.get_running_loop().run_in_executor(threads, _in_thread, work, *args)


def in_scan_thread_soon(work: Callable[[], None]) -> None:
    """`work()` on a scan thread, not waited for (the loop's cache reloads, which report their
    own errors): what it raises is dropped, after a database error has closed the thread's
    connection as `in_scan_thread` does."""
    # RuntimeError: the threads are stopping with the worker; the entry expires instead.
    with contextlib.suppress(RuntimeError):
        _scan_threads().submit(_in_thread, work)


def _remember_connection() -> None:
    _thread_connections.append(connections["default"])


async def scan_threads_close() -> None:
    """Stop the scan threads and close the connections they kept (a worker shutting down)."""
    global _threads
    threads, _threads = _threads, None
    if threads is not None:
        await asyncio.get_running_loop().run_in_executor(None, threads.shutdown)
    # Off the loop: Django refuses to close a connection from async code
    # (SynchronousOnlyOperation), which made every shutdown after a scan thread had run fail.
    await asyncio.get_running_loop().run_in_executor(None, _close_kept_connections)


def _close_kept_connections() -> None:
    while _thread_connections:
        kept = _thread_connections.pop()
        kept.inc_thread_sharing()  # its thread has ended: closing it from here is safe
        try:
            kept.close()
        finally:
            kept.dec_thread_sharing()
