"""`safeground assess`: check the risk policy and assess again every fixture still to be played.

With --policy FILE, only check FILE and show the category each open fixture would get under it
(nothing is kept): the way to try a policy before it replaces SAFEGROUND_RISK_POLICY.
"""

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from safeground.matches.models import Fixture
from safeground.matches.policy import PolicyFileError, policy_current, policy_read
from safeground.matches.risk import assess
from safeground.matches.services import risk_reassess_open


class Command(BaseCommand):
    help = "Check the risk policy; assess again every fixture still to be played."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--policy",
            type=Path,
            help="Check this file and show what it would give (the configured policy stays).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            policy = policy_read(path=options["policy"]) if options["policy"] else policy_current()
        except PolicyFileError as error:
            raise CommandError("policy refused:\n" + "\n".join(error.errors)) from error
        labels = ", ".join(f"{level.label} from {level.start:g}" for level in policy.categories)
        self.stdout.write(f"{policy.path}: policy OK ({labels})")
        if options["policy"]:
            fixtures = Fixture.objects.filter(kickoff__gt=timezone.now()).select_related(
                "ground", "home_club", "away_club", "competition"
            )
            for fixture in fixtures:
                result = assess(fixture, policy)
                self.stdout.write(f"  would be {result.category:<5} {fixture} ({result.summary})")
            return
        made = risk_reassess_open(policy=policy)
        for assessment in made:
            self.stdout.write(
                f"  {assessment.category:<5} {assessment.fixture} ({assessment.summary})"
            )
        self.stdout.write(f"{len(made)} open fixture(s) assessed again.")
