from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from safeground.backups.manifest import BackupError
from safeground.backups.selectors import backup_check


class Command(BaseCommand):
    help = (
        "Check a backup (DIR) against its manifest: every file's size and SHA-256, and no file"
        " it does not list. An encrypted backup is checked as stored, without the key. Changes"
        " nothing; exits 0 only if every file matches."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("dir", type=Path, help="the backup's folder (with manifest.json)")

    def handle(self, *args: Any, dir: Path, **options: Any) -> None:
        try:
            checked = backup_check(folder=dir)
        except BackupError as error:
            raise CommandError(error.message) from None
        manifest, found = checked.manifest, checked.found
        encryption = manifest.get("encryption")
        kind = (
            f"encrypted (age) to {', '.join(encryption['recipients'])}, checked as stored"
            if encryption
            else "not encrypted"
        )
        self.stdout.write(f"backup of {manifest.get('created_at', '?')} in {dir}: {kind}")
        for name in found.mismatched:
            self.stderr.write(f"  DOES NOT MATCH: {name} (its size or SHA-256 differs)")
        for name in found.missing:
            self.stderr.write(f"  MISSING: {name} (listed in the manifest)")
        for name in found.unlisted:
            self.stderr.write(f"  NOT LISTED: {name} (in the folder, not in the manifest)")
        if not found.ok:
            problems = len(found.mismatched) + len(found.missing) + len(found.unlisted)
            raise CommandError(f"{dir} does not match its manifest ({problems})")
        self.stdout.write(f"  {found.checked} file(s) match their size and SHA-256")
