"""The whole ground's seat labels as a queued task, for `safeground worker` when tasks wait in
the database (seat_sheets._start)."""

from django.tasks import task

from .seat_sheets import ground_labels_make


@task
def ground_labels_task(job_id: int) -> None:
    ground_labels_make(job_id=job_id)
