"""Background work, one way (docs/adr/0018-one-background-work-system.md).

Queued work goes through django-tasks. What must run beside a request for latency (flashpoint
scoring, push alerts, the database outage's probe) is handed to `submit`, or to `later` to run
after a delay; it runs on this process's few background threads. Periodic jobs (the log's
anchoring, overdue broadcasts, the league's publication) are put on the one clock with
`schedule_start`, which `safeground serve` and `safeground worker` call alike
(live/schedule.py). Nothing else in Safeground starts a thread of its own
(tests/test_background.py keeps it so).

`settle()` waits until everything submitted, and everything waiting on the clock to be
submitted, has run: tests call it before their database is emptied, and a command before it
exits (atexit). A periodic job that meets the database away logs one line when the outage
begins for it and one when it runs again, not a traceback every run.
"""

import atexit
import heapq
import itertools
import logging
import os
import queue
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from django.db import InterfaceError, OperationalError, connections

logger = logging.getLogger(__name__)

# Threads per process for background work. Each job returns its database connection when it
# ends, so a thread holds one only while it works.
THREADS = max(1, int(os.environ.get("SAFEGROUND_BACKGROUND_THREADS", "4")))
# How long a process that is exiting waits for the work it started (a replay's last scoring).
EXIT_WAIT_SECONDS = 30.0

Work = Callable[[], object]


@dataclass(frozen=True, eq=False)
class Delayed:
    name: str
    work: Work
    waited_for: bool


@dataclass(eq=False)
class Job:
    """A periodic job: `run` every `every` seconds, first one period after it is scheduled."""

    name: str
    every: float
    run: Work
    running: bool = False
    stopped: bool = False
    down_since: float | None = None  # monotonic time its outage began; None while it runs

    def run_logged(self) -> None:
        """One run. A database that does not answer is one warning when it begins for this job
        and one line when the job runs again; any other failure is logged with its traceback,
        and the next run comes as planned."""
        try:
            self.run()
        except (OperationalError, InterfaceError) as error:
            if self.down_since is None:
                self.down_since = time.monotonic()
                logger.warning(
                    "periodic job %s: the database does not answer (%s); trying every %g s",
                    self.name,
                    _first_line(error),
                    self.every,
                )
            return
        except Exception:
            logger.exception("periodic job %s failed; it runs again in %g s", self.name, self.every)
            return
        finally:
            _connections_close()
        if self.down_since is not None:
            took, self.down_since = time.monotonic() - self.down_since, None
            logger.info("periodic job %s: the database answers again after %.0f s", self.name, took)


class Background:
    """One process's background threads and its clock."""

    def __init__(self, threads: int = THREADS) -> None:
        self.threads = threads
        self._work: queue.SimpleQueue[tuple[str, Work] | None] = queue.SimpleQueue()
        self._workers: list[threading.Thread] = []
        self._pending = 0  # submitted or on the clock, not yet finished
        self._idle = threading.Condition()
        # The clock: (due, order, what) where what is a delayed piece of work or a periodic job.
        self._due: list[tuple[float, int, Delayed | Job]] = []
        self._order = itertools.count()
        self._clock_changed = threading.Condition()
        self._clock: threading.Thread | None = None

    # -- work beside a request --------------------------------------------------------------

    def submit(self, work: Work, *, name: str) -> None:
        """Run `work()` on a background thread; the caller returns at once."""
        with self._idle:
            self._pending += 1
        self._put(name, work)

    def later(self, seconds: float, work: Work, *, name: str, waited_for: bool = True) -> None:
        """Run `work()` on a background thread after `seconds`; no thread waits meanwhile.
        `waited_for=False`: settle() waits for it only once it runs (a probe that may come
        again and again, and touches nothing a test or an exit must wait for)."""
        if waited_for:
            with self._idle:
                self._pending += 1
        self._on_clock(time.monotonic() + seconds, Delayed(name, work, waited_for))

    def settle(self, timeout: float = 30.0) -> bool:
        """Wait until all the work submitted (and all waiting on the clock) has run; False if
        that took over `timeout`. Periodic jobs count only while one runs."""
        with self._idle:
            return self._idle.wait_for(lambda: self._pending == 0, timeout)

    def shutdown(self, timeout: float = EXIT_WAIT_SECONDS) -> bool:
        """At process exit: let the work under way and due end (up to `timeout`), then stop the
        threads. False if some was still running."""
        settled = self.settle(timeout)
        with self._idle:
            workers, self._workers = self._workers, []
        for _ in workers:
            self._work.put(None)
        for worker in workers:
            worker.join(max(0.0, timeout) if settled else 0.1)
        return settled

    def _put(self, name: str, work: Work) -> None:
        with self._idle:
            if not self._workers:
                self._workers = [
                    threading.Thread(
                        target=self._serve, name=f"safeground-background-{n}", daemon=True
                    )
                    for n in range(1, self.threads + 1)
                ]
                for worker in self._workers:
                    worker.start()
        self._work.put((name, work))

    def _serve(self) -> None:
        while (item := self._work.get()) is not None:
            name, work = item
            try:
                work()
            except Exception:
                logger.exception("background work %s failed", name)
            finally:
                _connections_close()
                with self._idle:
                    self._pending -= 1
                    self._idle.notify_all()

    # -- periodic jobs ------------------------------------------------------------------------

    def schedule_start(self, jobs: Iterable[Job]) -> Callable[[], None]:
        """Put the jobs on the clock; returns what takes them off again, waiting (up to 10 s)
        for a run under way to end."""
        started = list(jobs)
        now = time.monotonic()
        for job in started:
            job.stopped = False
            self._on_clock(now + job.every, job)

        def halt() -> None:
            with self._clock_changed:
                for job in started:
                    job.stopped = True
                self._due = [entry for entry in self._due if entry[2] not in started]
                heapq.heapify(self._due)
            deadline = time.monotonic() + 10
            with self._idle:
                self._idle.wait_for(
                    lambda: not any(job.running for job in started),
                    max(0.0, deadline - time.monotonic()),
                )

        return halt

    def _on_clock(self, due: float, what: Delayed | Job) -> None:
        with self._clock_changed:
            heapq.heappush(self._due, (due, next(self._order), what))
            if self._clock is None:
                self._clock = threading.Thread(
                    target=self._keep_time, name="safeground-clock", daemon=True
                )
                self._clock.start()
            self._clock_changed.notify()

    def _keep_time(self) -> None:
        while True:
            with self._clock_changed:
                while not self._due or self._due[0][0] > time.monotonic():
                    wait = self._due[0][0] - time.monotonic() if self._due else None
                    self._clock_changed.wait(wait)
                _, _, what = heapq.heappop(self._due)
                if isinstance(what, Job):
                    # The next run is planned from this one's start: a slow run delays, never
                    # piles up (one still running when its next is due is skipped).
                    heapq.heappush(
                        self._due, (time.monotonic() + what.every, next(self._order), what)
                    )
            if isinstance(what, Job):
                self._job_submit(what)
            elif what.waited_for:
                self._put(what.name, what.work)  # counted as pending when put on the clock
            else:
                self.submit(what.work, name=what.name)

    def _job_submit(self, job: Job) -> None:
        with self._idle:
            if job.running or job.stopped:
                return
            job.running = True

        def run() -> None:
            try:
                job.run_logged()
            finally:
                with self._idle:
                    job.running = False

        self.submit(run, name=job.name)


def _connections_close() -> None:
    """Return this thread's database connections (to the pool), as a request's end would."""
    for wrapper in connections.all(initialized_only=True):
        wrapper.close()


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


background = Background()
submit = background.submit
later = background.later
settle = background.settle
schedule_start = background.schedule_start
shutdown = background.shutdown
# A command that appends (a replay) or sends alerts waits for that work before it exits; the
# threads are daemons, so a process never hangs on them past this.
atexit.register(background.shutdown)
