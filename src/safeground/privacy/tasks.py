"""The daily job (bans rolled forward, then retention) as a Django task (django.tasks; the
immediate backend runs it in process). Enqueue it once a day from whatever scheduler the
installation has, or use the cron line in privacy/management/commands/apply_retention.py."""

from django.tasks import task

from .services import register_daily


@task
def register_daily_task() -> dict[str, int]:
    rolled, retention = register_daily()
    return {
        "activated": rolled.activated,
        "expired": rolled.expired,
        "flagged": rolled.flagged,
        "people_erased": retention.people_erased,
        "people_held": retention.people_held,
        **{f"{step.what.replace(' ', '_')}_erased": step.erased for step in retention.steps},
        **{f"{step.what.replace(' ', '_')}_held": step.held for step in retention.steps},
    }
