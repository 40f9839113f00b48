"""Reads for deployment: who is where and who has checked in, the checks and their state, the
plan beside the stewards actually posted, and the briefing's contents."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Prefetch, Q
from django.utils.translation import gettext, gettext_noop

from safeground.incidents.selectors import assignable_people, current_posts, post_label
from safeground.matches.models import Fixture, PlanVersion
from safeground.matches.selectors import plan_current, plan_is_signed_off

from .models import CheckIn, CheckResult, MatchCheck, PlanReady

NOT_DONE = "not_done"
STATE_LABELS = {  # in the reader's language when shown (CheckState.label)
    NOT_DONE: gettext_noop("Not done"),
    CheckResult.Outcome.PASS: gettext_noop("Passed"),
    CheckResult.Outcome.FAIL: gettext_noop("Failed"),
    CheckResult.Outcome.RECHECK: gettext_noop("Sent back: check again"),
}


@dataclass(frozen=True)
class CheckState:
    check: MatchCheck
    state: str  # not_done | pass | fail | recheck
    latest: CheckResult | None
    results: list[CheckResult]

    @property
    def label(self) -> str:
        return gettext(STATE_LABELS[self.state])

    @property
    def done(self) -> bool:
        return self.state in (CheckResult.Outcome.PASS, CheckResult.Outcome.FAIL)

    @property
    def blocks_ready(self) -> bool:
        """A critical check that has not passed (failed, sent back, or not done)."""
        return self.check.critical and self.state != CheckResult.Outcome.PASS

    def summary(self) -> dict[str, Any]:
        return {
            "check": self.check.pk,
            "name": self.check.name,
            "place": str(self.check.place),
            "state": self.state,
        }


def check_states(fixture: Fixture, checks: Any = None) -> list[CheckState]:
    """Each check of the match with its latest result (the results in order). A zone's checks
    count only while the match uses the zone (a changed layout leaves its old zones' checks
    behind, kept but out of the count)."""
    query = checks if checks is not None else MatchCheck.objects.filter(fixture=fixture)
    query = query.filter(Q(zone__isnull=True) | Q(zone__in=fixture.zones.values("zone")))
    query = query.select_related("zone", "gate", "concourse").prefetch_related(
        Prefetch("results", queryset=CheckResult.objects.select_related("by").order_by("at", "pk"))
    )
    states = []
    for check in query:
        results: list[CheckResult] = list(check.results.all())  # type: ignore[misc]
        latest = results[-1] if results else None
        states.append(CheckState(check, latest.outcome if latest else NOT_DONE, latest, results))
    return states


@dataclass(frozen=True)
class Completion:
    total: int
    done: int
    passed: int
    failed: int
    open_critical: list[CheckState]

    @property
    def prepared(self) -> bool:
        return self.total > 0


def completion(states: list[CheckState]) -> Completion:
    return Completion(
        total=len(states),
        done=sum(s.done for s in states),
        passed=sum(s.state == CheckResult.Outcome.PASS for s in states),
        failed=sum(s.state == CheckResult.Outcome.FAIL for s in states),
        open_critical=[s for s in states if s.blocks_ready],
    )


def post_place_filter(post: Any) -> dict[str, int]:
    """The checks at a post's place: {"zone_id": ...}, {"gate_id": ...} or {"concourse_id": ...}."""
    for name in ("zone_id", "gate_id", "concourse_id"):
        value = getattr(post, name)
        if value is not None:
            return {name: value}
    raise ValueError("a post has a place")


def checks_at_post(fixture: Fixture, post: Any) -> list[CheckState]:
    if post is None:
        return []
    return check_states(
        fixture, MatchCheck.objects.filter(fixture=fixture, **post_place_filter(post))
    )


def check_in_for(post: Any) -> CheckIn | None:
    return None if post is None else CheckIn.objects.filter(post=post).first()


@dataclass(frozen=True)
class StewardRow:
    username: str
    name: str
    post: str
    kind: str  # zone | gate | concourse | "" (not posted)
    checked_in_at: Any = None


@dataclass(frozen=True)
class ZoneRow:
    zone: str
    name: str
    use: str
    planned: int | None  # from the current plan; None without a plan
    posted: int
    checked_in: int

    @property
    def short(self) -> int:
        return max(0, (self.planned or 0) - self.posted)


@dataclass
class Board:
    fixture: Fixture
    posted: list[StewardRow]
    not_posted: list[StewardRow]
    zones: list[ZoneRow]
    elsewhere: list[StewardRow]  # at gates and concourses
    plan: PlanVersion | None
    checks: list[CheckState] = field(default_factory=list)
    completion: Completion | None = None
    ready: PlanReady | None = None

    @property
    def not_checked_in(self) -> list[StewardRow]:
        return [row for row in self.posted if row.checked_in_at is None]

    @property
    def plan_signed_off(self) -> bool:
        return self.plan is not None and plan_is_signed_off(self.plan)


def _kind(post: Any) -> str:
    return "zone" if post.zone_id else "gate" if post.gate_id else "concourse"


def deployment_board(fixture: Fixture) -> Board:
    """Who is where, who has checked in, the plan's stewards per zone beside those posted, the
    checks and whether the current plan is marked ready."""
    posts = current_posts(fixture)
    checked = {
        c.post_id: c.checked_in_at
        for c in CheckIn.objects.filter(post_id__in=[p.pk for p in posts.values()])
    }
    posted = sorted(
        (
            StewardRow(
                username=post.steward.username,
                name=str(post.steward),
                post=post_label(post),
                kind=_kind(post),
                checked_in_at=checked.get(post.pk),
            )
            for post in posts.values()
        ),
        key=lambda row: (row.kind, row.post, row.name),
    )
    usernames = {row.username for row in posted}
    not_posted = [
        StewardRow(username=p["username"], name=p["label"], post="", kind="")
        for p in assignable_people(fixture)
        if p["username"] not in usernames
    ]
    plan = plan_current(fixture)
    planned = {row["zone"]: row["stewards"] for row in plan.stewards} if plan else {}
    in_zone = Counter(p.zone.code for p in posts.values() if p.zone_id)
    in_zone_checked = Counter(
        p.zone.code for p in posts.values() if p.zone_id and checked.get(p.pk)
    )
    zones = [
        ZoneRow(
            zone=fz.zone.code,
            name=fz.zone.local_name,
            use=fz.use,
            planned=planned.get(fz.zone.code) if plan else None,
            posted=in_zone[fz.zone.code],
            checked_in=in_zone_checked[fz.zone.code],
        )
        for fz in fixture.zones.select_related("zone").order_by("use", "zone__code")
    ]
    states = check_states(fixture)
    return Board(
        fixture=fixture,
        posted=posted,
        not_posted=not_posted,
        zones=zones,
        elsewhere=[row for row in posted if row.kind != "zone"],
        plan=plan,
        checks=states,
        completion=completion(states),
        ready=plan_ready_current(fixture, plan),
    )


def plan_ready_current(fixture: Fixture, plan: PlanVersion | None = None) -> PlanReady | None:
    """The ready mark of the current plan version (a mark on an earlier version no longer
    counts: the plan changed since)."""
    plan = plan if plan is not None else plan_current(fixture)
    if plan is None:
        return None
    return (
        PlanReady.objects.filter(fixture=fixture, version=plan)
        .select_related("by")
        .order_by("-at", "-pk")
        .first()
    )
