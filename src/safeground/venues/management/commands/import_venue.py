"""`safeground import-venue FILE [--organisation SLUG]`: create a ground from a venue file."""

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db.models import Sum

from safeground.accounts.models import Organisation
from safeground.venues.models import Turnstile
from safeground.venues.services import venue_import
from safeground.venues.venue_file import VenueFileError


class Command(BaseCommand):
    help = "Import a ground from a YAML venue file (checked whole; nothing written on error)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", type=Path, help="the venue file (see docs/venue-file.md)")
        parser.add_argument(
            "--organisation",
            metavar="SLUG",
            help="the club that owns the ground (may be left out when there is only one club)",
        )

    def handle(self, *args: Any, file: Path, organisation: str | None, **options: Any) -> None:
        owner = _organisation(organisation)
        try:
            ground = venue_import(path=file, organisation=owner)
        except VenueFileError as error:
            for message in error.errors:
                self.stderr.write(message)
            count = len(error.errors)
            raise CommandError(
                f"{count} error{'s' if count != 1 else ''} in {file}; nothing was imported"
            ) from None
        seats = ground.blocks.aggregate(total=Sum("capacity"))["total"] or 0
        self.stdout.write(
            f"Imported {ground.name}: {ground.stands.count()} stands, "
            f"{ground.blocks.count()} blocks, {seats} seats, {ground.gates.count()} gates, "
            f"{Turnstile.objects.filter(gate__ground=ground).count()} turnstiles"
        )


def _organisation(slug: str | None) -> Organisation:
    if slug:
        try:
            return Organisation.objects.get(slug=slug)
        except Organisation.DoesNotExist:
            raise CommandError(f"unknown organisation '{slug}'") from None
    clubs = list(Organisation.objects.filter(kind=Organisation.Kind.CLUB))
    if len(clubs) != 1:
        known = ", ".join(club.slug for club in clubs) or "none yet"
        raise CommandError(f"name the club with --organisation SLUG (clubs: {known})")
    return clubs[0]
