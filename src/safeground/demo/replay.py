"""Replay a scripted match into the live system, through the same services as real reports.

A scenario is a YAML file (see scenarios/): the fixture (home and away club), optional steward
posts, and entries at minutes from kick-off: reports (`category` with a place) and actions on
earlier ones (`action: assign | escalate | resolve | close`, `entry: <ref>`), and the radio
switched (`action: radio-down | radio-up`, `decided_by: <login>`, `note`). Times observed are
the fixture's kick-off plus `at`, so a replay's log is the same whatever the speed.
"""

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import yaml
from django.contrib.auth import get_user_model
from django.utils import timezone

from safeground import background
from safeground.decisions.models import Decision, RadioSwitch
from safeground.decisions.selectors import radio_is_down
from safeground.decisions.services import DecisionParts, decision_record, radio_down, radio_restore
from safeground.errors import SafegroundError
from safeground.incidents import posts, services
from safeground.incidents.models import LogEntry
from safeground.matches.models import Fixture

SCENARIOS = Path(__file__).resolve().parent / "scenarios"
SHIPPED = {"seed": SCENARIOS / "seed-2016-10-26.yaml"}
PLACE_FIELDS = ("block", "first_row", "last_row", "zone", "gate", "concourse", "outside")


class ScenarioError(SafegroundError):
    """A scenario that cannot be replayed; the message names the entry and field."""

    code = "scenario_refused"

    def __init__(self, message: str) -> None:
        super().__init__("scenario", message)


@dataclass(frozen=True)
class Scenario:
    title: str
    home: str
    away: str
    posts: list[dict[str, str]]
    entries: list[dict[str, Any]]


def scenario_load(name_or_path: str) -> Scenario:
    path = SHIPPED.get(name_or_path) or Path(name_or_path)
    if not path.exists():
        shipped = ", ".join(SHIPPED)
        raise ScenarioError(f"no scenario {name_or_path!r} (a file, or one of: {shipped})")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ScenarioError(f"{path}: not valid YAML: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("entries"), list):
        raise ScenarioError(f"{path}: needs 'fixture' and a list of 'entries'")
    fixture = data.get("fixture") or {}
    entries = data["entries"]
    for n, entry in enumerate(entries):
        if not isinstance(entry, dict) or "at" not in entry or "by" not in entry:
            raise ScenarioError(f"{path}: entries[{n}]: needs 'at' and 'by'")
    times = [float(e["at"]) for e in entries]
    if times != sorted(times):
        raise ScenarioError(f"{path}: entries must be in time order")
    return Scenario(
        title=str(data.get("title", path.stem)),
        home=str(fixture.get("home", "")),
        away=str(fixture.get("away", "")),
        posts=list(data.get("posts") or []),
        entries=entries,
    )


def scenario_fixture(scenario: Scenario) -> Fixture:
    """The latest of the clubs' fixtures that has kicked off: a scenario replays a match played,
    never one still to come (the demo season has fixtures later today)."""
    fixture = (
        Fixture.objects.filter(
            home_club__name=scenario.home,
            away_club__name=scenario.away,
            kickoff__lte=timezone.now(),
        )
        .order_by("-kickoff")
        .first()
    )
    if fixture is None:
        raise ScenarioError(f"no fixture {scenario.home} v {scenario.away}: load the demo first")
    return fixture


def replay(
    scenario: Scenario,
    *,
    fixture: Fixture,
    speed: float,
    on_entry: Callable[[dict[str, Any], LogEntry], None] = lambda spec, entry: None,
) -> list[LogEntry]:
    """Play the scenario; sleep (at - previous at) / speed minutes between entries."""
    users = {u.username: u for u in get_user_model().objects.all()}

    def user(name: Any, where: str) -> Any:
        if name not in users:
            raise ScenarioError(f"{where}: no user {name!r}")
        return users[name]

    for post in scenario.posts:
        steward = user(post.get("steward"), "posts")
        posts.steward_post_assign(
            fixture=fixture,
            steward=steward,
            assigned_by=users.get("safety", steward),
            zone=post.get("zone", ""),
            gate=post.get("gate", ""),
            concourse=post.get("concourse", ""),
        )
    refs: dict[str, LogEntry] = {}
    written: list[LogEntry] = []
    previous: float | None = None
    for spec in scenario.entries:
        at = float(spec["at"])
        if previous is not None and speed > 0:
            time.sleep(max(0.0, (at - previous) * 60 / speed))
        previous = at
        author = user(spec["by"], f"at {spec['at']}")
        entry = _play(spec, fixture=fixture, author=author, refs=refs, users=users)
        if "ref" in spec:
            refs[spec["ref"]] = entry
        written.append(entry)
        on_entry(spec, entry)
    background.settle()  # the warnings the scenario raised are in the log when it ends
    return written


RADIO = {"radio-down": True, "radio-up": False}
REPLAYED = "Replayed from the scenario"


def _radio(spec: dict[str, Any], *, fixture: Fixture, author: Any, users: dict[str, Any]) -> Any:
    """The radio switched down or back up at the scenario's minute (a retrospective decision);
    a replay finding it already so switches nothing."""
    down = RADIO[spec["action"]]
    if radio_is_down(fixture) == down:
        return RadioSwitch.objects.filter(fixture=fixture, down=down).latest("at").decision.entry
    if spec.get("decided_by") not in users:
        raise ScenarioError(f"at {spec['at']}: no user {spec.get('decided_by')!r} decided it")
    switch = (radio_down if down else radio_restore)(
        fixture=fixture,
        by=author,
        decision_maker=users[spec["decided_by"]],
        note=spec.get("note", ""),
        decided_at=fixture.kickoff + timedelta(minutes=float(spec["at"])),
        retrospective_reason=REPLAYED,
    )
    return switch.decision.entry


def _kickoff_delay(
    spec: dict[str, Any], *, fixture: Fixture, author: Any, users: dict[str, Any]
) -> Any:
    """The kick-off put back (`minutes`, `note` its reason) by a commander's decision at the
    scenario's minute (before kick-off: negative); a replay finding it so decides nothing."""
    minutes = int(spec.get("minutes", 0))
    already = Decision.objects.filter(fixture=fixture, kickoff_delay=minutes).first()
    if already is not None:
        return already.entry
    if spec.get("decided_by") not in users:
        raise ScenarioError(f"at {spec['at']}: no user {spec.get('decided_by')!r} decided it")
    decision = decision_record(
        fixture=fixture,
        loggist=author,
        decision_maker=users[spec["decided_by"]],
        parts=DecisionParts(
            decision=f"Put the kick-off back {minutes} minutes",
            rationale=spec.get("note", "") or REPLAYED,
            kickoff_delay=minutes,
        ),
        decided_at=fixture.kickoff + timedelta(minutes=float(spec["at"])),
        retrospective_reason=REPLAYED,
    )
    return decision.entry


def _play(
    spec: dict[str, Any],
    *,
    fixture: Fixture,
    author: Any,
    refs: dict[str, LogEntry],
    users: dict[str, Any],
) -> LogEntry:
    action = spec.get("action")
    if action is None:
        return services.log_entry_append(
            fixture=fixture,
            author=author,
            category=spec.get("category", ""),
            severity=spec.get("severity"),
            text=spec.get("text", ""),
            observed_at=fixture.kickoff + timedelta(minutes=float(spec["at"])),
            place=services.Place(**{f: str(spec.get(f, "")) for f in PLACE_FIELDS}),
            idempotency_key=f"replay:{fixture.pk}:{spec['at']}:{spec.get('ref', '')}",
        )
    if action in RADIO:
        return _radio(spec, fixture=fixture, author=author, users=users)
    if action == "kickoff-delay":
        return _kickoff_delay(spec, fixture=fixture, author=author, users=users)
    target = refs.get(spec.get("entry", ""))
    if target is None:
        raise ScenarioError(f"at {spec['at']}: {action} of unknown entry {spec.get('entry')!r}")
    note = spec.get("note", "")
    at = fixture.kickoff + timedelta(minutes=float(spec["at"]))
    if action == "assign":
        if spec.get("to") not in users:
            raise ScenarioError(f"at {spec['at']}: no user {spec.get('to')!r} to assign to")
        return services.log_entry_assign(
            entry=target, author=author, assignee=users[spec["to"]], note=note, observed_at=at
        )
    if action == "escalate":
        return services.log_entry_escalate(
            entry=target, author=author, to=spec["to"], note=note, observed_at=at
        )
    if action in {"resolve", "close"}:
        status = "resolved" if action == "resolve" else "closed"
        return services.log_entry_set_status(
            entry=target, author=author, status=status, note=note, observed_at=at
        )
    raise ScenarioError(f"at {spec['at']}: unknown action {action!r}")
