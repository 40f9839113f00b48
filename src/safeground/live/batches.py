"""Sockets' reads done together: what arrives while a batch is read waits for the next one.

After a server restart every screen of a match reconnects within seconds (issue 17). Read one
by one, each socket's admission and catch-up cost about ten ORM queries and two hops to a
thread, and one process admitted 70-150 sockets a second. Read together, a batch costs a few
queries and one hop whatever its size (docs/adr/0002-live-fan-out.md, Update 5). A socket that
knocks alone goes at once: nothing waits for a batch to fill. The group commit's asyncio flavour
(safeground.group_commit): a read that fails is read again one socket at a time, so one bad knock
closes only its own socket; the database away fails the batch at once.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable, Sequence
from typing import Any

from asgiref.sync import sync_to_async

from safeground.group_commit import OnLoop, Policy

BATCH_LIMIT = 500  # sockets read together at most
POLICY: Policy[Any] = Policy(limit=BATCH_LIMIT)


def reads_together[T, R](read: Callable[[Sequence[T]], list[R]]) -> OnLoop[T, R]:
    """One event loop's queue of items for `read`, which answers a list of them in order on a
    pool thread. One batch is read at a time; items that arrive meanwhile form the next."""
    # Any pool thread will do (the reads open and close their own connections); the process's
    # one thread-sensitive thread would queue them behind other work.
    on_a_thread = sync_to_async(read, thread_sensitive=False)

    async def read_on_a_thread(items: list[T]) -> list[R]:
        return await on_a_thread(items)

    return OnLoop(read_on_a_thread, POLICY)


_per_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, OnLoop[Any, Any]]] = (
    weakref.WeakKeyDictionary()
)


def batches_on_loop[T, R](name: str, read: Callable[[Sequence[T]], list[R]]) -> OnLoop[T, R]:
    """The running loop's batches for `read` (a server process has one loop; tests, many)."""
    mine = _per_loop.setdefault(asyncio.get_running_loop(), {})
    if name not in mine:
        mine[name] = reads_together(read)
    return mine[name]
