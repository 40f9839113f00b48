"""`safeground import-fixtures FILE.csv --ground CODE`: a season's fixtures, all or nothing."""

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from safeground.matches.season_file import SeasonFileError, season_file_parse
from safeground.matches.services import fixtures_import
from safeground.venues.models import Ground


class Command(BaseCommand):
    help = "Import a season's fixtures from a CSV file (checked whole; nothing written on error)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", type=Path, help="the CSV file (see matches/season_file.py)")
        parser.add_argument("--ground", required=True, help="the ground's code")

    def handle(self, *args: Any, file: Path, ground: str, **options: Any) -> None:
        found = Ground.objects.select_related("organisation").filter(code=ground).first()
        if found is None:
            raise CommandError(f"--ground: no ground '{ground}'")
        try:
            fixtures = season_file_parse(ground=found, data=file.read_bytes())
        except OSError as error:
            raise CommandError(f"{file}: cannot be read ({error.strerror or error})") from None
        except SeasonFileError as error:
            for message in error.errors:
                self.stderr.write(f"{file}: {message}")
            count = len(error.errors)
            raise CommandError(
                f"{count} error{'s' if count != 1 else ''} in {file}; nothing was imported"
            ) from None
        made = fixtures_import(ground=found, fixtures=fixtures, by=None)
        self.stdout.write(f"Imported {len(made)} fixtures at {found.name} from {file}.")
