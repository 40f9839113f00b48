"""`safeground import-tickets FILE --fixture ID`: a ticketing system's CSV export for one match."""

import time
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser, OutputWrapper

from safeground.entry.services import tickets_import
from safeground.entry.ticket_file import TicketFileError
from safeground.matches.models import Fixture


class Progress:
    """A plain progress bar on stderr (redrawn in place on a terminal, a line per step otherwise,
    at most twice a second)."""

    def __init__(self, stream: OutputWrapper) -> None:
        self.stream = stream
        self.last = 0.0
        self.tty = bool(getattr(stream, "isatty", lambda: False)())

    def __call__(self, stage: str, done: int, total: int) -> None:
        now = time.monotonic()
        if done < total and now - self.last < 0.5:
            return
        self.last = now
        width = 30
        filled = width * done // max(total, 1)
        bar = "#" * filled + "-" * (width - filled)
        end = "\r" if self.tty and done < total else "\n"
        self.stream.write(f"{stage:>8} [{bar}] {done}/{total}{end}", ending="")
        self.stream.flush()


class Command(BaseCommand):
    help = (
        "Import tickets for one match from a CSV export (checked whole; nothing written on error)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", type=Path, help="the CSV export (see entry/ticket_file.py)")
        parser.add_argument("--fixture", type=int, required=True, metavar="ID", help="the match")
        parser.add_argument("--quiet", action="store_true", help="no progress bar")

    def handle(self, *args: Any, file: Path, fixture: int, quiet: bool, **options: Any) -> None:
        match = Fixture.objects.select_related("home_club", "away_club").filter(pk=fixture).first()
        if match is None:
            raise CommandError(f"--fixture: no match with id {fixture}")
        progress = None if quiet else Progress(self.stderr)
        try:
            report = tickets_import(fixture=match, path=file, progress=progress)
        except TicketFileError as error:
            for message in error.errors:
                self.stderr.write(f"{file}: {message}")
            count = len(error.errors)
            raise CommandError(
                f"{count} error{'s' if count != 1 else ''} in {file}; nothing was imported"
            ) from None
        self.stdout.write(
            f"Imported {file} for {match}: {report.created} new, {report.updated} updated, "
            f"{report.unchanged} unchanged; {report.match.holders} holders matched against "
            f"{report.match.bans} bans in force, {report.match.flagged} new flags for review"
        )
