from typing import Any

from django.core.management.base import BaseCommand

from safeground.alerts.vapid import new_private_key


class Command(BaseCommand):
    help = (
        "Print a new VAPID private key for SAFEGROUND_VAPID_PRIVATE_KEY (phones subscribed under"
        " the old key must subscribe again)."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        self.stdout.write(new_private_key())
