from argparse import ArgumentParser, ArgumentTypeError
from typing import Any

from django.conf import settings
from django.core.management.base import CommandError
from django.tasks.signals import task_finished
from django_tasks_db.management.commands.db_worker import Command as DatabaseWorker
from django_tasks_db.management.commands.db_worker import valid_backend_name

from safeground import clock
from safeground.live.schedule import daily_tasks_schedule, scheduled_jobs_start


def _schedule_the_next_day(sender: Any, task_result: Any, **kwargs: Any) -> None:
    if task_result.task.module_path in settings.SAFEGROUND_DAILY_TASKS:
        daily_tasks_schedule()


class Command(DatabaseWorker):
    help = (
        "Run background tasks from the database queue (SAFEGROUND_TASKS=database), keep the"
        " daily jobs (SAFEGROUND_DAILY_TASKS) scheduled and run the periodic ones"
        " (SAFEGROUND_PERIODIC_TASKS). Run one or more beside the servers; each"
        " task is claimed under a row lock, so two workers never run the same task."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        super().add_arguments(parser)
        # django-tasks-db refuses a non-database backend while parsing ("not a database
        # backend"); handle() says instead which setting to change.
        parser._option_string_actions["--backend"].type = str

    def handle(self, *args: Any, **options: Any) -> None:
        if settings.SAFEGROUND_TASKS != "database":
            raise CommandError(
                "SAFEGROUND_TASKS is not 'database': tasks run where they are enqueued, so there is"
                " nothing for a worker to do (set SAFEGROUND_TASKS=database on the servers and the"
                " worker alike)"
            )
        try:
            valid_backend_name(options["backend_name"])
        except ArgumentTypeError as error:
            raise CommandError(f"--backend: {error}") from None
        for path, when in daily_tasks_schedule():
            self.stdout.write(f"Scheduled {path} for {clock.iso(when, 'minutes')}")
        task_finished.connect(_schedule_the_next_day, weak=False)
        # The servers leave the periodic jobs (the log's anchoring) to the workers when tasks
        # are queued in the database (SAFEGROUND_PERIODIC_TASKS_IN_SERVER); a worker also looks
        # again now and then that each daily job is scheduled (a killed worker's job).
        periodic_stop = None if options["batch"] else scheduled_jobs_start(worker=True)
        try:
            super().handle(*args, **options)
        finally:
            if periodic_stop is not None:
                periodic_stop()
            task_finished.disconnect(_schedule_the_next_day)
