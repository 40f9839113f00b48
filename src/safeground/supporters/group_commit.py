"""Reports that arrive while another report's transaction is being written wait, and go together
in the next transaction (group commit), as the turnstiles' scans do (entry/runtime/loop.py).

A flood from one stand is a hundred reports a second into a few dozen items. Written one
transaction each, every report paid its own commit (PostgreSQL waits for the WAL to reach the
disk) and queued on its item's row behind the others: the server took 25-60 reports a second. Here
the first thread to arrive writes, and the threads arriving meanwhile wait; when it is done, one of
them writes all of theirs in one transaction: one commit, one UPDATE per item however many
reports joined it. At a light load a report finds no one writing and goes alone, at once.

A caller already inside a transaction (a test's, or a view's own) writes alone: another thread's
report must never be written into a transaction that may yet roll back.
"""

import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import connection

BATCH_LIMIT = 64  # reports in one transaction at most


@dataclass(eq=False)
class _Waiting:
    job: Any
    done: bool = False
    result: Any = None
    error: BaseException | None = None


class GroupCommit[J, R]:
    """`submit(job)` returns what `write([job, ...])` made of the job, written together with the
    jobs of other threads waiting at the same moment. `write` returns one result per job in order
    (an exception: that job refused, raised to its caller), or raises; a batch that raises is
    written again one job at a time, so one bad job fails alone."""

    def __init__(self, write: Callable[[list[J]], list[R | Exception]]) -> None:
        self._write = write
        self._changed = threading.Condition()
        self._waiting: deque[_Waiting] = deque()
        self._writing = False

    def submit(self, job: J) -> R:
        if connection.in_atomic_block:
            me = _Waiting(job)
            self._run([me])
        else:
            me = self._wait_or_write(job)
        if me.error is not None:
            raise me.error
        result: R = me.result
        return result

    def _wait_or_write(self, job: J) -> _Waiting:
        me = _Waiting(job)
        with self._changed:
            self._waiting.append(me)
            while not me.done:
                if self._writing:
                    self._changed.wait()
                    continue
                self._writing = True
                batch = [
                    self._waiting.popleft() for _ in range(min(BATCH_LIMIT, len(self._waiting)))
                ]
                self._changed.release()
                try:
                    self._run(batch)
                finally:
                    for waiting in batch:  # interrupted (not an Exception): none waits forever
                        if not waiting.done:
                            waiting.error = RuntimeError("the reports' transaction was interrupted")
                            waiting.done = True
                    self._changed.acquire()
                    self._writing = False
                    self._changed.notify_all()
        return me

    def _run(self, batch: list[_Waiting]) -> None:
        try:
            results = self._write([w.job for w in batch])
        except Exception as error:
            if len(batch) == 1:
                batch[0].error, batch[0].done = error, True
                return
            for waiting in batch:  # which one failed is not known: each alone
                self._run([waiting])
            return
        for waiting, result in zip(batch, results, strict=True):
            if isinstance(result, Exception):
                waiting.error = result
            else:
                waiting.result = result
            waiting.done = True
