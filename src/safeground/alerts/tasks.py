"""The overdue job: urgent broadcasts not acknowledged in time, raised (services.overdue_raise).
Every 15 s (SAFEGROUND_PERIODIC_TASKS): in the server's own thread in the default install, in
`safeground worker` with a database queue."""

from django.tasks import task

from .services import overdue_raise


@task
def alerts_overdue_task() -> dict[str, list[int]]:
    return {"raised": [alert.broadcast_id for alert in overdue_raise() if alert.broadcast_id]}
