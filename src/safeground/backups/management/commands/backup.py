from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from safeground.backups.manifest import FILES, MANIFEST, BackupError
from safeground.backups.services import backup_make


def _size(n: int) -> str:
    return f"{n / 1_000_000:.1f} MB" if n >= 100_000 else f"{n:,} bytes"


class Command(BaseCommand):
    help = (
        "Back up the database, the evidence and photo files and the signed checkpoint files into"
        " DIR (new or empty), with a manifest of SHA-256s written last. With --recipient or"
        " SAFEGROUND_BACKUP_RECIPIENTS, every file is encrypted to those age public keys."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("dir", type=Path, help="the folder to write the backup into")
        parser.add_argument(
            "--recipient",
            action="append",
            default=[],
            metavar="AGE1...",
            help="encrypt to this age public key (repeatable; added to"
            " SAFEGROUND_BACKUP_RECIPIENTS); make one with `safeground backup-key`",
        )

    def handle(self, *args: Any, dir: Path, recipient: list[str], **options: Any) -> None:
        recipients = [*settings.SAFEGROUND_BACKUP_RECIPIENTS, *recipient]
        try:
            made = backup_make(folder=dir, recipients=recipients)
        except BackupError as error:
            raise CommandError(error.message) from None
        manifest = made.manifest
        files = [f for f in manifest["files"] if f["path"].startswith(f"{FILES}/")]
        counts = manifest["counts"]
        entries = sum(m["entries"] for m in counts["log_entries"].values())
        database = manifest["database"]
        self.stdout.write(
            f"backup of the {database['vendor']} database"
            f" ({_size(manifest['files'][0]['size'])}) and {len(files)} file(s)"
            f" ({_size(sum(f['size'] for f in files))}) in {dir}"
        )
        self.stdout.write(
            f"  {len(counts['log_entries'])} match log(s), {entries} log entries,"
            f" {counts['checkpoints']} checkpoint(s), {counts['scans']} scans,"
            f" {counts['evidence']} evidence item(s), {counts['log_photos']} log photo(s),"
            f" {counts['check_photos']} check photo(s)"
        )
        for note in made.notes:
            self.stdout.write(f"  {note}")
        if "encryption" in manifest:
            keys = manifest["encryption"]["recipients"]
            self.stdout.write(
                f"  every file encrypted (age) to {', '.join(keys)}: this server cannot read it"
                " back; restore with --identity and the private key of one of them"
            )
        self.stdout.write(f"  {MANIFEST} written last; check a restore with: safeground restore")
