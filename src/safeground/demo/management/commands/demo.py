from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from safeground.demo.season import DEMO_PASSWORD, LOGINS, demo_is_loaded, demo_load


class Command(BaseCommand):
    help = "Load the demo ground, clubs, season and one login per role."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--if-empty", action="store_true", help="Do nothing when the demo is already loaded."
        )

    def handle(self, *args: Any, if_empty: bool, **options: Any) -> None:
        if demo_is_loaded():
            if if_empty:
                return
            self.stdout.write("The demo is already loaded.")
            return
        ground = demo_load()
        self.stdout.write(f"Loaded the demo: {ground.name}, {ground.fixtures.count()} fixtures.")
        self.stdout.write(
            f"Logins (password {DEMO_PASSWORD}): " + ", ".join(login.username for login in LOGINS)
        )
