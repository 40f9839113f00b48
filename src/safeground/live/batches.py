"""Sockets' reads done together: what arrives while a batch is read waits for the next one.

After a server restart every screen of a match reconnects within seconds (issue 17). Read one
by one, each socket's admission and catch-up cost about ten ORM queries and two hops to a
thread, and one process admitted 70-150 sockets a second. Read together, a batch costs a few
queries and one hop whatever its size (docs/adr/0002-live-fan-out.md, Update 5). A socket that
knocks alone goes at once: nothing waits for a batch to fill (group commit, as entry's scans).
"""

from __future__ import annotations

import asyncio
import collections
import weakref
from collections.abc import Callable, Sequence
from typing import Any

from asgiref.sync import sync_to_async

BATCH_LIMIT = 500  # sockets read together at most


class Batches[T, R]:
    """One event loop's queue of items for `read`, which answers a list of them in order on a
    pool thread. One batch is read at a time; items that arrive meanwhile form the next."""

    def __init__(self, read: Callable[[Sequence[T]], list[R]], *, limit: int = BATCH_LIMIT):
        self._read = read
        self._limit = limit
        self._waiting: collections.deque[tuple[T, asyncio.Future[R]]] = collections.deque()
        self._reading = False

    async def ask(self, item: T) -> R:
        answer: asyncio.Future[R] = asyncio.get_running_loop().create_future()
        self._waiting.append((item, answer))
        self._start()
        return await answer

    def _start(self) -> None:
        if self._reading:
            return
        batch: list[tuple[T, asyncio.Future[R]]] = []
        while self._waiting and len(batch) < self._limit:
            item, answer = self._waiting.popleft()
            if not answer.done():  # its socket left while it waited
                batch.append((item, answer))
        if batch:
            self._reading = True
            asyncio.get_running_loop().create_task(self._run(batch))

    async def _run(self, batch: list[tuple[T, asyncio.Future[R]]]) -> None:
        try:
            # Any pool thread will do (the reads open and close their own connections); the
            # process's one thread-sensitive thread would queue them behind other work.
            results = await sync_to_async(self._read, thread_sensitive=False)(
                [item for item, _ in batch]
            )
        except Exception as error:  # each socket waiting answers for it (closes, logs)
            for _, answer in batch:
                if not answer.done():
                    answer.set_exception(error)
        else:
            for (_, answer), result in zip(batch, results, strict=True):
                if not answer.done():
                    answer.set_result(result)
        finally:
            self._reading = False
            self._start()


_per_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, Batches[Any, Any]]] = (
    weakref.WeakKeyDictionary()
)


def batches_on_loop[T, R](name: str, read: Callable[[Sequence[T]], list[R]]) -> Batches[T, R]:
    """The running loop's Batches for `read` (a server process has one loop; tests, many)."""
    mine = _per_loop.setdefault(asyncio.get_running_loop(), {})
    if name not in mine:
        mine[name] = Batches(read)
    return mine[name]
