from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from safeground.errors import SafegroundError
from safeground.exchange.checking import league_check, tickets_check
from safeground.matches.models import Fixture


class Command(BaseCommand):
    help = (
        "Check a fixture's ticket holders against the bans the league's clubs publish: every "
        "holder, or the holders of the tickets named with --ticket (at the point of sale)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--fixture", type=int, required=True)
        parser.add_argument(
            "--ticket",
            action="append",
            default=[],
            metavar="BARCODE",
            help="a ticket's barcode (again for more): check only these tickets' holders",
        )

    def handle(self, *args: Any, fixture: int, ticket: list[str], **options: Any) -> None:
        found = Fixture.objects.select_related("ground").filter(pk=fixture).first()
        if found is None:
            raise CommandError(f"--fixture: no fixture {fixture}")
        try:
            if ticket:
                report = tickets_check(fixture=found, barcodes=ticket)
            else:
                report = league_check(fixture=found)
        except SafegroundError as refused:
            raise CommandError(str(refused)) from refused
        self.stdout.write(
            f"checked {report.holders} holders against {report.published} published bans: "
            f"{report.matched} matched, {report.flagged} new flags, {report.withdrawn} withdrawn"
        )
        for barcode in report.matched_tickets:
            self.stdout.write(f"matched a league ban: ticket {barcode} (see the flags to review)")
        for barcode in report.unchecked:
            self.stdout.write(f"not checked: ticket {barcode} (no date of birth, or not valid)")
