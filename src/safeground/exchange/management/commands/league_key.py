from typing import Any

from django.core.management.base import BaseCommand

from safeground import signing


class Command(BaseCommand):
    help = "Print this installation's signing public key (base64url), to enrol at the exchange."

    def handle(self, *args: Any, **options: Any) -> None:
        self.stdout.write(signing.public_key_json()["public_key"])
