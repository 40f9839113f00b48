from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from safeground.errors import SafegroundError
from safeground.exchange.services import club_enrol


class Command(BaseCommand):
    help = "At the exchange: enrol a club with its signing public key (`safeground league-key`)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--name", required=True)
        parser.add_argument("--contact", required=True, help="shown to clubs with a match")
        parser.add_argument("--public-key", required=True, help="base64url, from league-key")

    def handle(self, *args: Any, name: str, contact: str, public_key: str, **o: Any) -> None:
        try:
            club = club_enrol(name=name, contact=contact, public_key=public_key)
        except SafegroundError as refused:
            raise CommandError(str(refused)) from refused
        self.stdout.write(f"enrolled {club.name} (key {club.key_id})")
