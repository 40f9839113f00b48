from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from safeground.errors import SafegroundError
from safeground.incidents.checkpoints import Checkpoint, checkpoints_from_path
from safeground.incidents.models import LogCheckpoint, LogEntry
from safeground.incidents.verify import log_verify
from safeground.matches.models import Fixture


class Command(BaseCommand):
    help = (
        "Recompute each match's log hash chain and check it against the signed checkpoints (the"
        " database's, and copies held outside it with --checkpoints); name what is missing, and a"
        " finished match whose log no checkpoint anchors."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--match", type=int, help="fixture id (default: every match)")
        parser.add_argument(
            "--checkpoints",
            type=Path,
            action="append",
            default=[],
            metavar="PATH",
            help="a checkpoint file, a download of a match's checkpoints, or a folder of them"
            " (the checkpoint folder, or a sharing organisation's copies); may be repeated",
        )

    def handle(
        self, *args: Any, match: int | None, checkpoints: list[Path], **options: Any
    ) -> None:
        held: list[Checkpoint] = []
        try:
            for path in checkpoints:
                held.extend(checkpoints_from_path(path))
        except SafegroundError as error:
            raise CommandError(error.message) from None
        if match is not None:
            ids = {match}
        else:
            # A match whose entries were all removed still has its checkpoints: check it too.
            ids = set(LogEntry.objects.values_list("fixture_id", flat=True).distinct().order_by())
            ids |= set(
                LogCheckpoint.objects.values_list("fixture_id", flat=True).distinct().order_by()
            )
            ids |= {checkpoint.fixture_id for checkpoint in held}
        broken = []
        for fixture_id in sorted(ids):
            fixture = (
                Fixture.objects.select_related("home_club", "away_club")
                .filter(pk=fixture_id)
                .first()
            )
            if fixture is None:
                raise CommandError(f"no match with id {fixture_id}")
            # Given the time, a finished match's log left unanchored fails (verify._anchoring).
            check = log_verify(fixture_id, held, now=timezone.now())
            name = f"match {fixture_id} ({fixture})"
            if check.ok:
                anchored = ""
                if check.checkpoints:
                    anchored = f", {check.checkpoints} signed checkpoint(s) agree"
                    anchored += f" up to #{check.anchored}"
                if check.not_yet_anchored:
                    anchored += f"; {check.not_yet_anchored} (the match is not over)"
                self.stdout.write(f"{name}: {check.entries} entries, chain intact{anchored}")
                continue
            broken.append(fixture_id)
            self.stderr.write(f"{name}: {check.entries} entries, does not verify:")
            for problem in check.problems:
                self.stderr.write(f"  {problem.code}: {problem.message}")
        if broken:
            raise CommandError(f"the log of {len(broken)} match(es) does not verify")
