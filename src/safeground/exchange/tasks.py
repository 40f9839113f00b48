"""The periodic publication (SAFEGROUND_PERIODIC_TASKS, every few seconds): a club in the league
publishes its bans when a change of the register waits (tried again while the exchange is down),
and every 15 minutes anyway, so a ban that ended by date is withdrawn without anyone touching
the register."""

from django.tasks import task

from .publishing import league_publish_due


@task
def league_publish_task() -> None:
    league_publish_due()
