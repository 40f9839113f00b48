"""`safeground recount-entry [--check]`: the gates' kept counts recounted from the scans."""

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from safeground.entry import counts


class Command(BaseCommand):
    help = (
        "Recount the gates' kept counts (scans by match, gate and reason; prevented from "
        "attending) from the scans and tickets; --check only compares and names what differs."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--check", action="store_true", help="compare only; exit 1 if any count differs"
        )

    def handle(self, *args: Any, check: bool, **options: Any) -> None:
        if not check:
            counts.counts_rebuild()
        differences = counts.differences()
        for line in differences:
            self.stderr.write(line)
        if differences:
            raise CommandError(f"{len(differences)} kept counts differ from the scans")
        self.stdout.write("The kept counts equal a full recount of the scans.")
