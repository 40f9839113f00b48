"""`safeground add-fixture --ground CODE --opponent NAME ...`: one fixture at a ground."""

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from safeground.matches.fixture_fields import fixture_fields_check
from safeground.matches.services import FixtureError, fixture_add
from safeground.venues.models import Ground


class Command(BaseCommand):
    help = "Add a fixture at a ground, with its zone layout and the organisations working it."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--ground", required=True, help="the ground's code")
        parser.add_argument("--opponent", required=True, help="the visiting club")
        parser.add_argument("--competition", required=True)
        parser.add_argument("--stage", default="")
        parser.add_argument("--kickoff", required=True, help="local time: 2026-12-05 15:00")
        parser.add_argument("--layout", required=True, help="one of the ground's layout codes")
        parser.add_argument("--away-allocation", default="0", dest="away_allocation")
        parser.add_argument(
            "--share",
            action="append",
            default=[],
            dest="shared_with",
            metavar="ORGANISATION",
            help="an organisation working the match, by slug (repeat for more)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        ground = (
            Ground.objects.select_related("organisation").filter(code=options["ground"]).first()
        )
        if ground is None:
            raise CommandError(f"--ground: no ground '{options['ground']}'")
        fields, problems = fixture_fields_check(ground=ground, data=options)
        if fields is None:
            for field, message in problems:
                self.stderr.write(f"--{field.replace('_', '-')}: {message}")
            raise CommandError("the fixture was not added")
        try:
            made = fixture_add(ground=ground, fields=fields, by=None)
        except FixtureError as error:
            raise CommandError(f"--{error.field}: {error.message}") from None
        kickoff = timezone.localtime(made.kickoff)
        self.stdout.write(f"Added {made} on {kickoff:%a %d %b %Y %H:%M} (id {made.pk}).")
