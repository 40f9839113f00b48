from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from safeground.demo.replay import ScenarioError, replay, scenario_fixture, scenario_load
from safeground.incidents.models import LogEntry
from safeground.incidents.services import LogEntryError


class Command(BaseCommand):
    help = "Play a scripted match into the live system (the demo ships 'seed')."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("scenario", help="'seed' or a scenario YAML file")
        parser.add_argument(
            "--speed", type=float, default=30.0, help="times real time (default 30); 0: no pauses"
        )

    def handle(self, *args: Any, scenario: str, speed: float, **options: Any) -> None:
        if speed < 0:
            raise CommandError("--speed: must be 0 or more")
        try:
            loaded = scenario_load(scenario)
            fixture = scenario_fixture(loaded)
            self.stdout.write(f"Replaying {loaded.title} into fixture {fixture.pk} at {speed:g}×")
            self.stdout.write(f"Watch it at /fixtures/{fixture.pk}/control/")

            def show(spec: dict[str, Any], entry: LogEntry) -> None:
                self.stdout.write(f"  {spec['at']:>6} min  #{entry.seq} {entry.get_kind_display()}")

            replay(loaded, fixture=fixture, speed=speed, on_entry=show)
        except (ScenarioError, LogEntryError) as exc:
            raise CommandError(str(exc)) from exc
        warnings = LogEntry.objects.filter(fixture=fixture, kind=LogEntry.Kind.WARNING).count()
        self.stdout.write(f"Done: {warnings} flashpoint warning(s) in the log.")
