from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from safeground.backups.manifest import BackupError
from safeground.backups.services import backup_restore


class Command(BaseCommand):
    help = (
        "Restore a backup (DIR) into this system's empty database and file folders: every file"
        " is checked against the manifest first; then the logs, checkpoints and evidence are"
        " verified. Exits 0 only if all of it verifies. An encrypted backup needs --identity."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("dir", type=Path, help="the backup's folder (with manifest.json)")
        parser.add_argument(
            "--identity",
            type=Path,
            metavar="FILE",
            help="an encrypted backup: the age identity file holding the private key"
            " (AGE-SECRET-KEY-1...) of one of its recipients",
        )

    def handle(self, *args: Any, dir: Path, identity: Path | None, **options: Any) -> None:
        try:
            restored = backup_restore(folder=dir, identity=identity)
        except BackupError as error:
            raise CommandError(error.message) from None
        check = restored.check
        self.stdout.write(
            f"restored {dir} into the database {restored.database} and {restored.files} file(s)"
            + (f" ({restored.skipped_same} already there, identical)" if restored.skipped_same
               else "")
        )  # fmt: skip
        for note in restored.notes:
            self.stdout.write(f"  {note}")
        self.stdout.write(
            f"  {check.matches} match log(s), {check.entries} entries, {check.checkpoints}"
            f" checkpoint(s) checked; {check.files} evidence file(s) and photo(s) match their"
            " SHA-256"
        )
        if not check.ok:
            for problem in check.problems:
                self.stderr.write(f"  DOES NOT VERIFY: {problem}")
            raise CommandError(f"the restored system does not verify ({len(check.problems)})")
        self.stdout.write("  every log chain, checkpoint, file and count verifies")
