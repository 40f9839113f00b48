import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from safeground.errors import SafegroundError
from safeground.incidents.checkpoints import checkpoint_file_write, checkpoint_read
from safeground.incidents.models import LogCheckpoint
from safeground.incidents.services import log_checkpoint_make
from safeground.matches.models import Fixture


class Command(BaseCommand):
    help = (
        "Sign a match's log head now (a checkpoint), write its file to the checkpoint storage and"
        " print it; --full-time at the final whistle."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--match", type=int, required=True, help="fixture id")
        parser.add_argument(
            "--full-time", action="store_true", help="the match is over: mark it as full time"
        )

    def handle(self, *args: Any, match: int, full_time: bool, **options: Any) -> None:
        fixture = Fixture.objects.filter(pk=match).first()
        if fixture is None:
            raise CommandError(f"no match with id {match}")
        reason = LogCheckpoint.Reason.FULL_TIME if full_time else LogCheckpoint.Reason.ON_REQUEST
        try:
            checkpoint = log_checkpoint_make(fixture=fixture, reason=reason)
        except SafegroundError as error:
            raise CommandError(error.message) from None
        # Written again even when the log had not grown: a lost or deleted file comes back
        # (under a new name if the old one is still there).
        name = checkpoint_file_write(checkpoint)
        self.stderr.write(
            f"match {fixture.pk} ({fixture}): #{checkpoint.entries} signed"
            f" ({checkpoint.get_reason_display()}, {checkpoint.made_at:%Y-%m-%d %H:%M:%S %Z});"
            f" file {name}"
        )
        self.stdout.write(json.dumps(checkpoint_read(checkpoint).to_json(), indent=2))
