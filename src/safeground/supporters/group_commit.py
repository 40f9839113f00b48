"""Reports that arrive while another report's transaction is being written wait, and go together
in the next transaction (group commit), as the turnstiles' scans do (entry/runtime/loop.py).

A flood from one stand is a hundred reports a second into a few dozen items. Written one
transaction each, every report paid its own commit (PostgreSQL waits for the WAL to reach the
disk) and queued on its item's row behind the others: the server took 25-60 reports a second. Here
one writer thread writes them: the reports arriving while it writes wait, and it then writes all
of theirs in one transaction: one commit, one UPDATE per item however many reports joined it. At a
light load a report finds it idle and goes alone, at once.

A caller already inside a transaction (a test's, or a view's own) writes alone: another thread's
report must never be written into a transaction that may yet roll back.
"""

from collections.abc import Callable

from django.db import connection

from safeground.group_commit import OnThread, Policy

BATCH_LIMIT = 64  # reports in one transaction at most


class GroupCommit[J, R]:
    """`submit(job)` returns what `write([job, ...])` made of the job, written together with the
    jobs of other threads waiting at the same moment, by one writer thread
    (safeground.group_commit.OnThread). `write` returns one result per job in order (an
    exception: that job refused, raised to its caller), or raises; a batch that raises is
    written again one job at a time, so one bad job fails alone."""

    def __init__(self, write: Callable[[list[J]], list[R | Exception]]) -> None:
        self._writer = OnThread(write, Policy(limit=BATCH_LIMIT), name="supporters-reports")

    def submit(self, job: J) -> R:
        if connection.in_atomic_block:
            return self._writer.alone(job)
        return self._writer.ask(job)
