from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from safeground.backups.encryption import identity_new
from safeground.backups.manifest import BackupError


class Command(BaseCommand):
    help = (
        "Make a key pair for encrypted backups: the private key (age identity) is written to"
        " FILE, readable by its owner only; the public key (age1...) is printed. Keep FILE off"
        " the server; give the public key to `safeground backup --recipient` or"
        " SAFEGROUND_BACKUP_RECIPIENTS."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", type=Path, help="a new file for the private key")

    def handle(self, *args: Any, file: Path, **options: Any) -> None:
        try:
            public = identity_new(file)
        except BackupError as error:
            raise CommandError(error.message) from None
        # Only the public key on stdout, so that `KEY=$(safeground backup-key FILE)` takes it.
        self.stdout.write(public)
        self.stderr.write(
            f"private key written to {file} (readable by you only): keep it, and a copy, off the"
            " server that makes the backups; without it no backup encrypted to the public key"
            " above can be restored"
        )
