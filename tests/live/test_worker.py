"""`safeground worker`: background tasks from the database queue, and the daily jobs kept scheduled
(SAFEGROUND_TASKS=database; live/schedule.py on the one scheduler, safeground.background)."""

from datetime import UTC, date, datetime, time, timedelta
from io import StringIO

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.core.management import CommandError, call_command
from django.tasks import TaskResultStatus
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from safeground.bans.models import Ban
from safeground.live.schedule import daily_tasks_schedule, next_run
from safeground.privacy.tasks import register_daily_task
from tests import factories

# The worker checks its connection between tasks as a request would (close_old_connections), which
# a test wrapped in a transaction cannot survive: the tests that run it commit for real.
commits = pytest.mark.django_db(transaction=True)
DAILY = "safeground.privacy.tasks.register_daily_task"


@pytest.fixture
def queue(settings):
    settings.SAFEGROUND_TASKS = "database"
    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}


def run_worker(*extra: str) -> str:
    out = StringIO()
    call_command("worker", "--batch", "--no-startup-delay", *extra, stdout=out)
    return out.getvalue()


@commits
def test_an_enqueued_job_waits_for_the_worker_which_runs_it_once(cast, queue) -> None:
    # A ban whose last day was yesterday is expired by the register's daily job.
    ban = factories.ban(cast.home, starts_on=date(2020, 1, 1), ends_on=date(2021, 1, 1))
    result = register_daily_task.enqueue()
    ban.refresh_from_db()
    assert ban.status == Ban.Status.ACTIVE  # nothing ran in the enqueuing process

    run_worker()
    ban.refresh_from_db()
    assert ban.status == Ban.Status.EXPIRED
    done = DBTaskResult.objects.get(id=result.id)
    assert done.status == TaskResultStatus.SUCCESSFUL
    assert done.return_value["expired"] == 1
    # A second worker pass finds nothing to run again.
    run_worker()
    assert DBTaskResult.objects.filter(status=TaskResultStatus.SUCCESSFUL).count() == 1


@commits
def test_the_worker_schedules_the_daily_job_once_however_often_it_starts(queue) -> None:
    out = run_worker()
    assert f"Scheduled {DAILY} for " in out
    run_worker()
    waiting = DBTaskResult.objects.filter(task_path=DAILY, status=TaskResultStatus.READY)
    assert waiting.count() == 1
    local = timezone.localtime(waiting.get().run_after)  # Europe/London
    assert (local.hour, local.minute) == (3, 15)
    assert waiting.get().run_after > timezone.now()


@commits
def test_when_the_daily_job_finishes_the_next_day_is_scheduled(cast, queue, settings) -> None:
    settings.SAFEGROUND_DAILY_TASKS = {DAILY: "03:15"}
    register_daily_task.enqueue()  # due now, as if today's 03:15 had come
    run_worker()
    ran = DBTaskResult.objects.get(task_path=DAILY, status=TaskResultStatus.SUCCESSFUL)
    following = DBTaskResult.objects.get(task_path=DAILY, status=TaskResultStatus.READY)
    assert following.run_after > ran.finished_at


@pytest.mark.django_db
def test_a_job_left_running_by_a_dead_worker_is_scheduled_again(queue) -> None:
    now = datetime(2026, 12, 2, 10, 0, tzinfo=UTC)
    [(path, _when)] = daily_tasks_schedule(now=now)
    job = DBTaskResult.objects.get(task_path=path)
    # Claimed by a worker that was then killed: marked running since long before.
    DBTaskResult.objects.filter(id=job.id).update(
        status=TaskResultStatus.RUNNING, started_at=datetime(2026, 12, 2, 3, 15, tzinfo=UTC)
    )
    assert daily_tasks_schedule(now=now.replace(hour=3, minute=30)) == []  # still running
    assert len(daily_tasks_schedule(now=now)) == 1  # abandoned: scheduled again


def test_next_run_is_the_next_local_time_across_the_clock_change() -> None:
    at = time(3, 15)
    # 29 March 2026: British Summer Time starts at 01:00 UTC; 03:15 BST is 02:15 UTC.
    assert next_run(at, now=datetime(2026, 3, 28, 12, 0, tzinfo=UTC)) == datetime(
        2026, 3, 29, 2, 15, tzinfo=UTC
    )
    # In winter 03:15 is 03:15 UTC; at 03:15 exactly the next run is tomorrow's.
    assert next_run(at, now=datetime(2026, 12, 2, 3, 15, tzinfo=UTC)) == datetime(
        2026, 12, 3, 3, 15, tzinfo=UTC
    )


@pytest.mark.django_db
def test_a_bad_daily_time_is_named(queue, settings) -> None:
    settings.SAFEGROUND_DAILY_TASKS = {DAILY: "quarter past three"}
    with pytest.raises(ImproperlyConfigured, match=r"SAFEGROUND_DAILY_TASKS.*not HH:MM"):
        daily_tasks_schedule()


def test_the_worker_refuses_to_start_without_the_database_queue(settings) -> None:
    settings.SAFEGROUND_TASKS = "immediate"
    with pytest.raises(CommandError, match="SAFEGROUND_TASKS is not 'database'"):
        run_worker()


@commits
def test_a_running_worker_looks_again_so_a_killed_workers_job_is_not_lost(
    queue, monkeypatch, settings
):
    import time as clock

    from safeground.live import schedule

    [(path, _when)] = daily_tasks_schedule()
    # The job was claimed by a worker killed two hours ago: the next look schedules it again.
    DBTaskResult.objects.filter(task_path=path).update(
        status=TaskResultStatus.RUNNING, started_at=timezone.now() - timedelta(hours=2)
    )
    monkeypatch.setattr(schedule, "SCHEDULE_CHECK_SECONDS", 0.05)
    settings.SAFEGROUND_PERIODIC_TASKS = {}  # only the look at the daily jobs, as a worker has
    halt = schedule.scheduled_jobs_start(worker=True)
    try:
        deadline = clock.monotonic() + 10
        while not DBTaskResult.objects.filter(status=TaskResultStatus.READY).exists():
            assert clock.monotonic() < deadline, "the daily job was not scheduled again"
            clock.sleep(0.05)
    finally:
        halt()
    assert DBTaskResult.objects.filter(task_path=path, status=TaskResultStatus.READY).count() == 1


def test_serve_and_worker_start_the_same_scheduler_with_their_jobs(settings) -> None:
    from safeground.live.schedule import scheduled_jobs

    every = settings.SAFEGROUND_PERIODIC_TASKS
    worker = {job.name: job.every for job in scheduled_jobs(worker=True)}
    assert worker == {
        **{path: float(s) for path, s in every.items()},
        "daily jobs kept scheduled": 600,
    }
    settings.SAFEGROUND_PERIODIC_TASKS_IN_SERVER = False  # a worker runs them
    assert scheduled_jobs(worker=False) == []
    settings.SAFEGROUND_PERIODIC_TASKS_IN_SERVER = True  # the default install: the server does
    assert {job.name for job in scheduled_jobs(worker=False)} == set(every)
