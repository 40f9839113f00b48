from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from safeground import clock
from safeground.accounts.models import Device
from safeground.accounts.services import device_revoke


class Command(BaseCommand):
    help = "Revoke a device key."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("device_id", type=int)

    def handle(self, *args: Any, device_id: int, **options: Any) -> None:
        device = Device.objects.filter(pk=device_id).first()
        if device is None:
            raise CommandError(f"no device with id {device_id}")
        device = device_revoke(device=device)
        self.stdout.write(f"Revoked {device.name} at {clock.local_time(device.revoked_at)}")
