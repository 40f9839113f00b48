from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from safeground.casework.bundle import BundleError, bundle_verify


class Command(BaseCommand):
    help = "Check a case bundle (ZIP): every file against its SHA-256 in the manifest."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="the case bundle, as exported (case-N-....zip)")

    def handle(self, *args: Any, file: str, **options: Any) -> None:
        try:
            check = bundle_verify(file)
        except BundleError as error:
            raise CommandError(error.message) from None
        for name in check.mismatched:
            self.stderr.write(f"DOES NOT MATCH: {name} (its SHA-256 differs from the manifest)")
        for name in check.missing:
            self.stderr.write(f"MISSING: {name} (listed in the manifest, not in the ZIP)")
        for name in check.unlisted:
            self.stderr.write(f"NOT LISTED: {name} (in the ZIP, not in the manifest)")
        if not check.ok:
            bad = len(check.mismatched) + len(check.missing) + len(check.unlisted)
            raise CommandError(f"{file}: {bad} file(s) do not match the manifest")
        self.stdout.write(f"{file}: {check.checked} files match the manifest")
