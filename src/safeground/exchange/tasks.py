"""The periodic publication (SAFEGROUND_PERIODIC_TASKS): a club in the league publishes its bans
again, so a ban that ended by date is withdrawn without anyone touching the register."""

from django.tasks import task

from .publishing import league_publish_quietly


@task
def league_publish_task() -> None:
    league_publish_quietly()
