from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from safeground.backups.manifest import MANIFEST, BackupError
from safeground.backups.services import backup_make


def _size(n: int) -> str:
    return f"{n / 1_000_000:.1f} MB" if n >= 100_000 else f"{n:,} bytes"


class Command(BaseCommand):
    help = (
        "Back up the database, the evidence and photo files and the signed checkpoint files into"
        " DIR (new or empty), with a manifest of SHA-256s written last."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("dir", type=Path, help="the folder to write the backup into")

    def handle(self, *args: Any, dir: Path, **options: Any) -> None:
        try:
            made = backup_make(folder=dir)
        except BackupError as error:
            raise CommandError(error.message) from None
        manifest = made.manifest
        files = manifest["files"]
        counts = manifest["counts"]
        entries = sum(m["entries"] for m in counts["log_entries"].values())
        database = manifest["database"]
        self.stdout.write(
            f"backup of the {database['vendor']} database ({_size(files[0]['size'])}) and"
            f" {len(files) - 1} file(s) ({_size(sum(f['size'] for f in files[1:]))}) in {dir}"
        )
        self.stdout.write(
            f"  {len(counts['log_entries'])} match log(s), {entries} log entries,"
            f" {counts['checkpoints']} checkpoint(s), {counts['scans']} scans,"
            f" {counts['evidence']} evidence item(s), {counts['log_photos']} log photo(s),"
            f" {counts['check_photos']} check photo(s)"
        )
        for note in made.notes:
            self.stdout.write(f"  {note}")
        self.stdout.write(f"  {MANIFEST} written last; check a restore with: safeground restore")
