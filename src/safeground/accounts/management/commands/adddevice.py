from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import IntegrityError

from safeground.accounts.models import Device, Organisation
from safeground.accounts.services import device_create


class Command(BaseCommand):
    help = "Create a device key (turnstile or scanner) for an organisation."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name")
        parser.add_argument("--organisation", required=True, help="organisation slug")
        parser.add_argument("--profile", required=True, choices=Device.Profile.values)

    def handle(self, *args: Any, **options: Any) -> None:
        organisation = Organisation.objects.filter(slug=options["organisation"]).first()
        if organisation is None:
            raise CommandError(f"unknown organisation {options['organisation']!r}")
        try:
            device, key = device_create(
                organisation=organisation, name=options["name"], profile=options["profile"]
            )
        except IntegrityError as exc:
            raise CommandError(
                f"{organisation} already has a device named {options['name']!r}"
            ) from exc
        self.stdout.write(f"Device {device.pk} {device.name}: key (shown once) {key}")
