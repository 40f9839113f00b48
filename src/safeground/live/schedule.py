"""The daily jobs a worker keeps scheduled (settings.SAFEGROUND_DAILY_TASKS: task path -> HH:MM),
and the periodic ones a server or worker runs every so many seconds (SAFEGROUND_PERIODIC_TASKS).

django-tasks has no clock of its own: a daily job is a task enqueued with `run_after` at its next
time, enqueued again each time it finishes. A job already waiting (or running, not abandoned) is
never enqueued twice; if two workers start at the same instant and both enqueue it, the jobs are
idempotent (the register's daily job started and expired today's bans already the second time).

A periodic job (the log's anchoring, every minute) is not queued: a row a minute in the task
table would outgrow everything else in it. The process that keeps the clock (each server in the
default install, else each worker) calls the task itself on the one scheduler
(safeground.background): `scheduled_jobs_start` is how `serve` and `worker` alike start it. Its
jobs are idempotent.
"""

from collections.abc import Callable
from datetime import date, datetime, time, timedelta
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db.models import Q
from django.tasks import Task, TaskResultStatus
from django.utils import timezone
from django.utils.module_loading import import_string

from safeground import background

# A task marked running for longer than this belongs to a worker that died (kill -9): the job is
# scheduled again rather than waiting for it forever.
ABANDONED_AFTER = timedelta(hours=1)
# How often a worker looks again whether each daily job is scheduled: a job left running by a
# worker that was killed is taken as abandoned after ABANDONED_AFTER.
SCHEDULE_CHECK_SECONDS = 600


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


def scheduled_jobs(*, worker: bool) -> list[background.Job]:
    """The periodic jobs of a server (`worker=False`) or of `safeground worker`: the periodic
    tasks (SAFEGROUND_PERIODIC_TASKS) in a worker, and in a server too when no worker runs
    them (SAFEGROUND_PERIODIC_TASKS_IN_SERVER); a worker also looks again every
    SCHEDULE_CHECK_SECONDS that each daily job is scheduled."""
    jobs = []
    if worker or settings.SAFEGROUND_PERIODIC_TASKS_IN_SERVER:
        for path, seconds in settings.SAFEGROUND_PERIODIC_TASKS.items():
            task: Task[Any, Any] = import_string(path)
            jobs.append(background.Job(path, float(seconds), task.call))
    if worker:
        jobs.append(
            background.Job(
                "daily jobs kept scheduled", SCHEDULE_CHECK_SECONDS, daily_tasks_schedule
            )
        )
    return jobs


def scheduled_jobs_start(*, worker: bool) -> Callable[[], None]:
    """Put this process's periodic jobs on the one scheduler; returns what takes them off."""
    return background.schedule_start(scheduled_jobs(worker=worker))
