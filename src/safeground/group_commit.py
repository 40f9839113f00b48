"""Group commit, once: items that arrive while a batch is being written wait, and go together in
the next batch; an item that finds nobody writing goes alone, at once (nothing waits for a batch
to fill). Turnstiles' scans (entry/runtime/loop.py), sockets' admissions (live/batches.py),
supporters' reports (supporters/group_commit.py) and phones' receipts (alerts/receipts.py) all go
through it (docs/adr/0019-one-group-commit.md).

One `Policy` says how a batch is made and what a failure does:

- `limit`: items in one batch at most;
- `keys`: an item whose key is already in the batch waits for the next one, so a batch writes
  each key (a ticket, a nonce, a recipient) at most once, in order of arrival;
- a failed batch is written again one item at a time, so one bad item fails only itself and the
  others are written; unless `repeats(error)` says the failure is the connection's (the database
  away), which each item would only meet again: then the whole batch fails at once.

`write(jobs)` returns one result per job in order; a result that is an Exception is that job
refused, raised to its caller alone.

Two flavours share the policy: `OnLoop`, on an asyncio event loop, for an async write (entry's
statement on PostgreSQL) or a read handed to a pool thread (live); and `OnThread`, for a sync
write (Django's ORM, SQLite): a calling thread that finds nobody writing writes the batch itself,
and callers on the loop hand their jobs to its one writer thread, `group-commit-<name>`
(supporters' reports, phones' receipts).
"""

from __future__ import annotations

import asyncio
import collections
import threading
from collections.abc import Awaitable, Callable, Hashable, Iterable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Protocol

import psycopg
from django.db import InterfaceError, connections

from safeground.disk_full import storage_full


def connection_failed(error: Exception) -> bool:
    """Whether `error` is the connection's failure rather than one item's: the database away, the
    connection broken, no connection within the pool's wait. Each item alone would meet it again.
    A refusal of a statement (a sqlstate: a foreign key, a deadlock) is an item's; a full disk or
    a database refusing writes (safeground.disk_full) is every item's."""
    if isinstance(error, TimeoutError | InterfaceError) or storage_full(error):
        return True
    for cause in (error, error.__cause__):  # Django wraps the driver's error
        if isinstance(cause, psycopg.Error):
            return cause.sqlstate is None or cause.sqlstate.startswith("08")
    return False


@dataclass(frozen=True)
class Policy[J]:
    limit: int
    keys: Callable[[J], Iterable[Hashable]] | None = None
    repeats: Callable[[Exception], bool] = connection_failed

    def take[W: _Waiting[Any]](self, waiting: collections.deque[W]) -> list[W]:
        """The next batch from `waiting`, in order of arrival: at most `limit`, each key once
        (the others go back to the front, in order), none whose caller has gone."""
        batch: list[W] = []
        later: list[W] = []
        seen: set[Hashable] = set()
        while waiting and len(batch) < self.limit:
            item = waiting.popleft()
            if self.keys is not None:
                keys = set(self.keys(item.job))
                if not seen.isdisjoint(keys):
                    later.append(item)
                    continue
                if not item.taken():
                    continue
                seen |= keys
            elif not item.taken():
                continue
            batch.append(item)
        waiting.extendleft(reversed(later))
        return batch

    def split(self, batch: Sequence[object], error: Exception) -> bool:
        """Whether a failed batch is written again one item at a time."""
        return len(batch) > 1 and not self.repeats(error)


class _Answer[R](Protocol):
    """What asyncio's and concurrent.futures' Future have alike."""

    def done(self) -> bool: ...
    def set_result(self, result: R, /) -> None: ...
    def set_exception(self, exception: BaseException, /) -> None: ...


@dataclass(eq=False)
class _Waiting[J]:
    job: J
    answer: _Answer[Any]

    def taken(self) -> bool:
        """Into a batch, unless its caller has gone (hung up, past its deadline)."""
        return not self.answer.done()


def _deliver(batch: Sequence[_Waiting[Any]], results: Sequence[object]) -> None:
    if len(results) != len(batch):
        raise ValueError(f"{len(results)} results for {len(batch)} jobs")
    for waiting, result in zip(batch, results, strict=True):
        if waiting.answer.done():  # its caller has gone meanwhile
            continue
        if isinstance(result, Exception):
            waiting.answer.set_exception(result)
        else:
            waiting.answer.set_result(result)


def _fail(batch: Sequence[_Waiting[Any]], error: BaseException) -> None:
    for waiting in batch:
        if not waiting.answer.done():
            waiting.answer.set_exception(error)


class OnLoop[J, R]:
    """The asyncio flavour: one event loop's items, written by `write` (a coroutine), with up to
    `in_flight` batches being written at once (each on a connection of its own)."""

    def __init__(
        self,
        write: Callable[[list[J]], Awaitable[Sequence[R | Exception]]],
        policy: Policy[J],
        *,
        in_flight: int = 1,
    ) -> None:
        self._write = write
        self.policy = policy
        self._in_flight = max(1, in_flight)
        self._waiting: collections.deque[_Waiting[J]] = collections.deque()
        self._running: set[asyncio.Task[None]] = set()

    def submit(self, job: J) -> asyncio.Future[R]:
        """`job`'s answer to come; cancelling it before its batch is taken leaves `job` out."""
        answer: asyncio.Future[R] = asyncio.get_running_loop().create_future()
        self._waiting.append(_Waiting(job, answer))
        self._start()
        return answer

    async def ask(self, job: J) -> R:
        return await self.submit(job)

    def _start(self) -> None:
        while self._waiting and len(self._running) < self._in_flight:
            batch = self.policy.take(self._waiting)
            if not batch:
                continue
            task = asyncio.get_running_loop().create_task(self._run(batch))
            self._running.add(task)
            task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[None]) -> None:
        self._running.discard(task)
        self._start()

    async def _run(self, batch: list[_Waiting[J]]) -> None:
        try:
            await self._write_batch(batch)
        except BaseException as error:  # cancelled, or a bug: no caller waits forever
            _fail(batch, error)
            if not isinstance(error, Exception):
                raise

    async def _write_batch(self, batch: list[_Waiting[J]]) -> None:
        try:
            results = await self._write([waiting.job for waiting in batch])
        except Exception as error:
            if not self.policy.split(batch, error):
                _fail(batch, error)
                return
            for waiting in batch:  # which one failed is not known: each alone
                if not waiting.answer.done():
                    await self._write_batch([waiting])
            return
        _deliver(batch, results)


# Every OnThread's writer, so that tests can wait for all of them to be idle (settle_all).
_writers: list[OnThread[Any, Any]] = []


@dataclass(eq=False)
class _Threaded[J](_Waiting[J]):
    answer: Future[Any] = field(default_factory=Future)
    handed: bool = False  # to the writer thread (its caller is on the event loop)

    def taken(self) -> bool:
        # From here its caller cannot cancel it (an awaiting loop hung up before: left out).
        return self.answer.set_running_or_notify_cancel()


class OnThread[J, R]:
    """The thread flavour, for a sync `write` (Django's ORM, SQLite). One batch is written at a
    time, by whoever holds the pen: a caller on a thread that finds nobody writing writes the
    next batch itself, in its own thread, with no hand-off (a report alone is as quick as it was
    unbatched); callers on the event loop hand their jobs to the writer thread of its own
    (`group-commit-<name>`, started at the first such job, a daemon), which closes its database
    connections whenever nothing waits, so it holds none while idle."""

    def __init__(
        self,
        write: Callable[[list[J]], Sequence[R | Exception]],
        policy: Policy[J],
        *,
        name: str,
    ) -> None:
        self._write = write
        self.policy = policy
        self.name = f"group-commit-{name}"
        self._changed = threading.Condition()
        self._waiting: collections.deque[_Threaded[J]] = collections.deque()
        self._writing = False
        self._thread: threading.Thread | None = None
        _writers.append(self)

    def submit(self, job: J) -> Future[R]:
        """`job` handed to the writer thread; its answer to come."""
        waiting = _Threaded(job, handed=True)
        with self._changed:
            self._waiting.append(waiting)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._serve, name=self.name, daemon=True)
                self._thread.start()
            self._changed.notify_all()
        return waiting.answer

    def ask(self, job: J) -> R:
        """`job` written with the jobs waiting at the same moment, by this thread if nobody is
        writing; its result, or what refused it raised."""
        waiting = _Threaded(job)
        with self._changed:
            self._waiting.append(waiting)
            while not waiting.answer.done():
                if self._writing:
                    self._changed.wait()
                else:
                    self._write_next()
        return waiting.answer.result()

    async def ask_async(self, job: J) -> R:
        """`ask` for a caller on the event loop: written by the writer thread."""
        return await asyncio.wrap_future(self.submit(job))

    def alone(self, job: J) -> R:
        """`job` written by this thread, alone, with the policy's outcome: for a caller inside a
        transaction of its own, into which no other caller's job may go."""
        waiting = _Threaded(job)
        waiting.taken()
        self._write_batch([waiting])
        return waiting.answer.result()

    def settle(self, timeout: float = 30.0) -> bool:
        """Wait until nothing waits and nothing is being written; whether it came to that."""
        with self._changed:
            return self._changed.wait_for(
                lambda: not self._waiting and not self._writing, timeout=timeout
            )

    def _write_next(self) -> None:
        """Holding the lock, the pen free: the next batch written, the lock let go meanwhile."""
        self._writing = True
        batch = self.policy.take(self._waiting)
        self._changed.release()
        try:
            if batch:
                self._write_batch(batch)
        except BaseException as error:  # not an Exception: no caller waits forever
            _fail(batch, error)
            raise
        finally:
            self._changed.acquire()
            self._writing = False
            self._changed.notify_all()

    def _serve(self) -> None:
        with self._changed:
            while True:
                self._changed.wait_for(
                    lambda: not self._writing and any(w.handed for w in self._waiting)
                )
                self._write_next()
                if not self._waiting:
                    self._changed.release()
                    try:
                        connections.close_all()  # this thread's: back to the pool, or closed
                    finally:
                        self._changed.acquire()

    def _write_batch(self, batch: list[_Threaded[J]]) -> None:
        try:
            results = self._write([waiting.job for waiting in batch])
        except Exception as error:
            if not self.policy.split(batch, error):
                _fail(batch, error)
                return
            for waiting in batch:  # which one failed is not known: each alone
                self._write_batch([waiting])
            return
        _deliver(batch, results)


def settle_all(timeout: float = 30.0) -> bool:
    """Every writer thread idle (tests, before their database is emptied)."""
    return all(writer.settle(timeout) for writer in list(_writers))
