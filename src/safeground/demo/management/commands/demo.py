from datetime import datetime
from typing import Any

from django.core.management.base import BaseCommand, CommandParser
from django.utils import timezone

from safeground.demo.season import (
    DEMO_PASSWORD,
    LOGINS,
    demo_is_loaded,
    demo_load,
    rerun_find,
    rerun_load,
    rerun_move_to_today,
)


class Command(BaseCommand):
    help = (
        "Load the demo ground, clubs, season (2016) and one login per role, and the cup tie "
        "again kicking off a few hours from now (a match the scanners can pair with today)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--if-empty", action="store_true", help="Do nothing when the demo is already loaded."
        )

    def handle(self, *args: Any, if_empty: bool, **options: Any) -> None:
        if demo_is_loaded():
            moved = rerun_move_to_today() if rerun_find() else rerun_load()
            if moved is not None:
                self._today(moved.kickoff)
            if if_empty:
                return
            self.stdout.write("The demo is already loaded.")
            return
        ground = demo_load()
        rerun = rerun_load()
        self.stdout.write(f"Loaded the demo: {ground.name}, {ground.fixtures.count()} fixtures.")
        self._today(rerun.kickoff)
        self.stdout.write(
            f"Logins (password {DEMO_PASSWORD}): " + ", ".join(login.username for login in LOGINS)
        )

    def _today(self, kickoff: datetime) -> None:
        local = timezone.localtime(kickoff)
        self.stdout.write(
            f"Today's match: the cup tie again, kick-off {local:%H:%M} ({local:%Z}): "
            "pair a scanner at /entry/scanner/ and scan RERUN-000001."
        )
