from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from safeground.errors import SafegroundError
from safeground.exchange.checking import league_check
from safeground.matches.models import Fixture


class Command(BaseCommand):
    help = "Check a fixture's ticket holders against the bans the league's clubs publish."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--fixture", type=int, required=True)

    def handle(self, *args: Any, fixture: int, **options: Any) -> None:
        found = Fixture.objects.select_related("ground").filter(pk=fixture).first()
        if found is None:
            raise CommandError(f"--fixture: no fixture {fixture}")
        try:
            report = league_check(fixture=found)
        except SafegroundError as refused:
            raise CommandError(str(refused)) from refused
        self.stdout.write(
            f"checked {report.holders} holders against {report.published} published bans: "
            f"{report.matched} matched, {report.flagged} new flags, {report.withdrawn} withdrawn"
        )
