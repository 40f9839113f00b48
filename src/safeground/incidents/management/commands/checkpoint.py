import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from safeground import clock
from safeground.errors import SafegroundError
from safeground.incidents.checkpoints import checkpoint_file_write, checkpoint_read
from safeground.incidents.models import LogCheckpoint
from safeground.incidents.services import log_checkpoint_make
from safeground.incidents.tasks import log_heads_anchor
from safeground.matches.models import Fixture


class Command(BaseCommand):
    help = (
        "Sign a match's log head now (a checkpoint), write its file to the checkpoint storage and"
        " print it; --full-time at the final whistle. --due: sign every head the anchoring job"
        " would (cron's line, when no server or worker runs the job)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        which = parser.add_mutually_exclusive_group(required=True)
        which.add_argument("--match", type=int, help="fixture id")
        which.add_argument(
            "--due",
            action="store_true",
            help="every log whose head is due: unsigned too long, or its match over",
        )
        parser.add_argument(
            "--full-time", action="store_true", help="the match is over: mark it as full time"
        )

    def handle(
        self, *args: Any, match: int | None, due: bool, full_time: bool, **options: Any
    ) -> None:
        if due:
            if full_time:
                raise CommandError("--full-time goes with --match (--due decides for itself)")
            for made in log_heads_anchor():
                self.stderr.write(
                    f"match {made.fixture_id}: #{made.entries} signed ({made.get_reason_display()})"
                )
            return
        assert match is not None  # --match or --due, one of them (argparse)
        fixture = Fixture.objects.filter(pk=match).first()
        if fixture is None:
            raise CommandError(f"no match with id {match}")
        reason = LogCheckpoint.Reason.FULL_TIME if full_time else LogCheckpoint.Reason.ON_REQUEST
        try:
            checkpoint = log_checkpoint_make(fixture=fixture, reason=reason)
        except SafegroundError as error:
            raise CommandError(error.message) from None
        # A new checkpoint's file was written as its transaction committed; this writes the file
        # of one signed before only if the storage lost it (checkpoint_file_write compares).
        name = checkpoint_file_write(checkpoint)
        signed_at = clock.local(checkpoint.made_at)
        self.stderr.write(
            f"match {fixture.pk} ({fixture}): #{checkpoint.entries} signed"
            f" ({checkpoint.get_reason_display()}, {signed_at:%Y-%m-%d %H:%M:%S %Z});"
            f" file {name}"
        )
        self.stdout.write(json.dumps(checkpoint_read(checkpoint).to_json(), indent=2))
