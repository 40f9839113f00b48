from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from safeground.incidents.models import LogEntry
from safeground.incidents.verify import chain_verify
from safeground.matches.models import Fixture


class Command(BaseCommand):
    help = "Recompute each match's log hash chain and name the first entry that does not fit."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--match", type=int, help="fixture id (default: every match)")

    def handle(self, *args: Any, match: int | None, **options: Any) -> None:
        if match is not None and not Fixture.objects.filter(pk=match).exists():
            raise CommandError(f"no match with id {match}")
        ids = (
            [match]
            if match is not None
            else LogEntry.objects.values_list("fixture_id", flat=True).distinct().order_by()
        )
        broken = []
        for fixture_id in sorted(set(ids)):
            fixture = Fixture.objects.select_related("home_club", "away_club").get(pk=fixture_id)
            count, found = chain_verify(fixture_id)
            if found is None:
                self.stdout.write(f"match {fixture_id} ({fixture}): {count} entries, chain intact")
            else:
                broken.append(fixture_id)
                self.stderr.write(
                    f"match {fixture_id} ({fixture}): entry #{found.seq} (id {found.entry_id}) "
                    f"{found.reason}"
                )
        if broken:
            raise CommandError(f"the log of {len(broken)} match(es) does not verify")
