from typing import Any

from django.core.management.base import BaseCommand, CommandError

from safeground.errors import SafegroundError
from safeground.exchange.publishing import league_publish_recorded


class Command(BaseCommand):
    help = "Publish this club's league-wide bans in force to the exchange now."

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            done = league_publish_recorded()
        except SafegroundError as refused:
            raise CommandError(str(refused)) from refused
        self.stdout.write(f"published {done.bans} bans; {done.withdrawn} withdrawn")
