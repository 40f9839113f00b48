"""The daily jobs a worker keeps scheduled (settings.SAFEGROUND_DAILY_TASKS: task path -> HH:MM),
and the periodic ones a server or worker runs every so many seconds (SAFEGROUND_PERIODIC_TASKS).

django-tasks has no clock of its own: a daily job is a task enqueued with `run_after` at its next
time, enqueued again each time it finishes. A job already waiting (or running, not abandoned) is
never enqueued twice; if two workers start at the same instant and both enqueue it, the jobs are
idempotent (the register's daily job started and expired today's bans already the second time).

A periodic job (the log's anchoring, every minute) is not queued: a row a minute in the task
table would outgrow everything else in it. A thread of the process that keeps the clock (each
server in the default install, else each worker) calls the task itself; its jobs are idempotent.
"""

import logging
import threading
import time as clock
from collections.abc import Callable
from datetime import date, datetime, time, timedelta
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import close_old_connections
from django.db.models import Q
from django.tasks import Task, TaskResultStatus
from django.utils import timezone
from django.utils.module_loading import import_string

logger = logging.getLogger(__name__)

# A task marked running for longer than this belongs to a worker that died (kill -9): the job is
# scheduled again rather than waiting for it forever.
ABANDONED_AFTER = timedelta(hours=1)


def daily_time(path: str, at: str) -> time:
    try:
        hour, minute = (int(part) for part in at.split(":"))
        return time(hour, minute)
    except ValueError:
        raise ImproperlyConfigured(
            f"SAFEGROUND_DAILY_TASKS[{path!r}]: {at!r} is not HH:MM"
        ) from None


def next_run(at: time, *, now: datetime) -> datetime:
    """The next local time `at` strictly after `now` (aware), as an aware datetime."""
    local = timezone.localtime(now)
    day: date = local.date()
    candidate = timezone.make_aware(datetime.combine(day, at))
    if candidate <= now:
        candidate = timezone.make_aware(datetime.combine(day + timedelta(days=1), at))
    return candidate


def daily_tasks_schedule(*, now: datetime | None = None) -> list[tuple[str, datetime]]:
    """Enqueue each daily job that is not already waiting; returns what was enqueued, and when."""
    from django_tasks_db.models import DBTaskResult

    now = now or timezone.now()
    enqueued = []
    for path, at in settings.SAFEGROUND_DAILY_TASKS.items():
        job: Task[Any, Any] = import_string(path)
        waiting = Q(status=TaskResultStatus.READY) | Q(
            status=TaskResultStatus.RUNNING, started_at__gt=now - ABANDONED_AFTER
        )
        if DBTaskResult.objects.filter(waiting, task_path=path).exists():
            continue
        when = next_run(daily_time(path, at), now=now)
        job.using(run_after=when).enqueue()
        enqueued.append((path, when))
    return enqueued


def periodic_tasks_run(stop: threading.Event) -> None:
    """Call each periodic task every so many seconds (SAFEGROUND_PERIODIC_TASKS), first after one
    period, until `stop` is set. A run that fails is logged and the next comes as planned."""
    jobs: list[tuple[str, Task[Any, Any], float]] = [
        (path, import_string(path), float(seconds))
        for path, seconds in settings.SAFEGROUND_PERIODIC_TASKS.items()
    ]
    if not jobs:
        return
    due = {path: clock.monotonic() + seconds for path, _, seconds in jobs}
    while not stop.wait(max(0.0, min(due.values()) - clock.monotonic())):
        for path, job, seconds in jobs:
            if clock.monotonic() < due[path]:
                continue
            due[path] = clock.monotonic() + seconds  # a slow run delays, never piles up
            try:
                job.call()
            except Exception:
                logger.exception("periodic job %s failed; it runs again in %s s", path, seconds)
            finally:
                close_old_connections()  # this thread's connection, between runs


def periodic_tasks_start() -> Callable[[], None]:
    """Run the periodic tasks in a daemon thread of this process; returns what stops it."""
    stop = threading.Event()
    thread = threading.Thread(
        target=periodic_tasks_run, args=(stop,), name="safeground-periodic", daemon=True
    )
    thread.start()

    def halt() -> None:
        stop.set()
        thread.join(timeout=10)

    return halt
