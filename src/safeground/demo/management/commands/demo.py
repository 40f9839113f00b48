from datetime import datetime
from typing import Any

from django.core.management.base import BaseCommand, CommandParser
from django.utils import timezone

from safeground import background
from safeground.accounts.models import Role
from safeground.demo.season import (
    DEMO_PASSWORD,
    LOGINS,
    demo_is_loaded,
    demo_load,
    rerun_find,
    rerun_load,
    rerun_move_to_today,
)
from safeground.incidents.tasks import log_heads_anchor


class Command(BaseCommand):
    help = (
        "Load the demo ground, clubs, season (2016) and one login per role, and the cup tie "
        "again kicking off a few hours from now (a match the scanners can pair with today)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--if-empty",
            action="store_true",
            help="Load nothing when the demo is already loaded (the logins are printed anyway).",
        )

    def handle(self, *args: Any, if_empty: bool, **options: Any) -> None:
        if demo_is_loaded():
            moved = rerun_move_to_today() if rerun_find() else rerun_load()
            if not if_empty:
                self.stdout.write("The demo is already loaded.")
        else:
            ground = demo_load()
            moved = rerun_load()
            # The season's past matches are over: their logs are signed at full time now, as
            # the anchoring job would a minute after `serve` starts (their warnings first).
            background.settle()
            log_heads_anchor()
            self.stdout.write(
                f"Loaded the demo: {ground.name}, {ground.fixtures.count()} fixtures."
            )
        if moved is not None:
            self._today(moved.kickoff)
        # `make run` runs this before `serve`: the logins are what a first visitor needs.
        self.stdout.write(f"\nDemo logins (password for all: {DEMO_PASSWORD}):")
        for login in LOGINS:
            self.stdout.write(
                f"  {login.username:<11} {Role(login.role).label}, {login.organisation}"
            )
        self.stdout.write(
            "\nTo watch the seed match (West Ham v Chelsea, 26 Oct 2016) come alive, log in as"
            " loggist or police, open the cup tie's live log and map, then in another terminal"
            " run:\n  .venv/bin/safeground replay seed --speed 30"
        )

    def _today(self, kickoff: datetime) -> None:
        local = timezone.localtime(kickoff)
        self.stdout.write(
            f"Today's match: the cup tie again, kick-off {local:%H:%M} ({local:%Z}): "
            "pair a scanner at /entry/scanner/ and scan RERUN-000001."
        )
