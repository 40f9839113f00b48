from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser


class Command(BaseCommand):
    help = (
        "Serve the league's ban exchange: the exchange role (SAFEGROUND_ROLE=exchange) with its "
        "own database (var/exchange.sqlite3, or DATABASE_URL). Migrate it first with "
        "`SAFEGROUND_ROLE=exchange safeground migrate`; enrol clubs with `exchange-enrol`."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8100)
        parser.add_argument("--migrate", action="store_true", help="migrate its database first")

    def handle(self, *args: Any, host: str, port: int, migrate: bool, **options: Any) -> None:
        if settings.SAFEGROUND_ROLE != "exchange":
            raise CommandError("run it as `safeground exchange` (it sets SAFEGROUND_ROLE)")
        if migrate:
            call_command("migrate", interactive=False, verbosity=0)
        call_command("serve", host=host, port=port, workers=1)
