"""`safeground import-arrests FILE --fixture ID --by USERNAME`: the police's arrest return for one
match (CSV: casework/arrest_file.py), checked whole; nothing is written if any line is wrong."""

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils.translation import ngettext

from safeground.accounts.models import User
from safeground.casework.arrest_file import ArrestsRefused, parse_arrests
from safeground.casework.services import arrests_import
from safeground.matches.models import Fixture


class Command(BaseCommand):
    help = "Import the police's arrests for one match from a CSV file (checked whole)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", type=Path, help="the CSV file (see casework/arrest_file.py)")
        parser.add_argument("--fixture", type=int, required=True, metavar="ID", help="the match")
        parser.add_argument(
            "--by", required=True, metavar="USERNAME", help="who records them (in the case)"
        )

    def handle(self, *args: Any, file: Path, fixture: int, by: str, **options: Any) -> None:
        match = Fixture.objects.select_related("ground").filter(pk=fixture).first()
        if match is None:
            raise CommandError(f"--fixture: no match with id {fixture}")
        user = User.objects.filter(username=by, is_active=True).first()
        if user is None:
            raise CommandError(f"--by: no active user '{by}'")
        try:
            data = file.read_bytes()
        except OSError as error:
            raise CommandError(f"{file}: cannot be read ({error.strerror})") from None
        try:
            done = arrests_import(fixture=match, by=user, rows=parse_arrests(data))
        except ArrestsRefused as error:
            for message in error.errors:
                self.stderr.write(f"{file}: {message}")
            count = len(error.errors)
            raise CommandError(
                f"{count} error{'s' if count != 1 else ''} in {file}; nothing was imported"
            ) from None
        already = f"; already recorded: {', '.join(done.already)}" if done.already else ""
        where = f" into case #{done.case.pk}" if done.case else ""
        n = done.created
        imported = ngettext(
            "Imported %(n)s arrest for %(match)s", "Imported %(n)s arrests for %(match)s", n
        ) % {"n": n, "match": match}
        self.stdout.write(f"{imported}{where}{already}")
