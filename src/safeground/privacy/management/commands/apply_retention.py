"""`safeground apply-retention`: the daily job (bans rolled forward, then retention), run by hand
or from cron.

15 3 * * *  cd /srv/safeground && .venv/bin/safeground apply-retention
"""

from datetime import date
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from safeground.privacy.services import register_daily


class Command(BaseCommand):
    help = (
        "Start and expire bans by date, then erase people whose bans ended long enough ago, "
        "ticket holders' names and dates of birth and photos of matches long enough ago."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--today", help="run as if today were this date (yyyy-mm-dd)")

    def handle(self, *args: Any, today: str | None, **options: Any) -> None:
        day = None
        if today:
            try:
                day = date.fromisoformat(today)
            except ValueError:
                raise CommandError(f"--today: '{today}' is not a date (yyyy-mm-dd)") from None
        rolled, retention = register_daily(today=day)
        self.stdout.write(
            f"Bans: {rolled.activated} came into force ({rolled.flagged} tickets flagged), "
            f"{rolled.expired} expired. Retention ({settings.SAFEGROUND_BAN_RETENTION_DAYS} days): "
            f"{retention.people_erased} people erased, {retention.bans_anonymised} bans kept "
            f"as counts, {retention.people_kept} people kept ({retention.people_held} of them "
            "held by an open case)."
        )
        for step in retention.steps:
            self.stdout.write(
                f"Retention ({step.days} days {step.after}): {step.erased} {step.what} erased, "
                f"{step.held} held {step.held_by}."
            )
