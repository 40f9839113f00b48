import getpass
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import IntegrityError

from safeground.accounts.models import Organisation, Role
from safeground.accounts.services import user_create


class Command(BaseCommand):
    help = "Create a user with a role in an organisation."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--organisation", required=True, help="organisation slug")
        parser.add_argument("--role", required=True, choices=Role.values)
        parser.add_argument("--first-name", default="")
        parser.add_argument("--last-name", default="")
        parser.add_argument("--email", default="")
        parser.add_argument(
            "--password", help="the password (asked for when not given; avoid it in shell history)"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        organisation = Organisation.objects.filter(slug=options["organisation"]).first()
        if organisation is None:
            known = ", ".join(Organisation.objects.values_list("slug", flat=True)) or "none yet"
            raise CommandError(f"unknown organisation {options['organisation']!r} (known: {known})")
        password = options["password"] or getpass.getpass("Password: ")
        if len(password) < 8:
            raise CommandError("password: at least 8 characters")
        try:
            user = user_create(
                username=options["username"],
                password=password,
                organisation=organisation,
                role=options["role"],
                first_name=options["first_name"],
                last_name=options["last_name"],
                email=options["email"],
            )
        except IntegrityError as exc:
            raise CommandError(f"username {options['username']!r} is already taken") from exc
        self.stdout.write(f"Created {user.username}: {Role(options['role']).label}, {organisation}")
