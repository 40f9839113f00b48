"""Reads about fixtures; a read of one fixture checks the reader may see it."""

from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db.models import Q, QuerySet
from django.http import Http404
from django.shortcuts import get_object_or_404
from django.utils import timezone

from safeground.accounts.permissions import (
    PLAN_SIGNERS,
    can_plan_fixtures,
    can_read_plan,
    can_view_fixture,
    organisation_ids,
    require,
)
from safeground.kept import Kept
from safeground.venues.capacity import Capacity, zone_capacities
from safeground.venues.models import Ground

from .kept import fixture_kept
from .models import Fixture, PlanSignOff, PlanVersion, RiskAssessment


def fixtures_visible_to(user: Any) -> QuerySet[Fixture]:
    """The home club's fixtures for its staff; shared ones for the organisations working them."""
    mine = organisation_ids(user)
    return (
        Fixture.objects.filter(Q(ground__organisation__in=mine) | Q(shares__organisation__in=mine))
        .distinct()
        .select_related("ground", "home_club", "away_club", "competition")
        .prefetch_related("shares")
    )


def fixtures_coming_and_recent(user: Any, *, recent: int = 10) -> tuple[list, list]:
    now = timezone.now()
    visible = fixtures_visible_to(user)
    coming = list(visible.filter(kickoff__gte=now).order_by("kickoff"))
    earlier = list(visible.filter(kickoff__lt=now).order_by("-kickoff")[:recent])
    return coming, earlier


def fixture_for(user: Any, fixture_id: int) -> Fixture:
    fixture = get_object_or_404(
        Fixture.objects.select_related(
            "ground", "home_club", "away_club", "competition", "layout"
        ).prefetch_related("shares__organisation", "zones__zone"),
        pk=fixture_id,
    )
    require(can_view_fixture(user, fixture))
    return fixture


def fixture_for_report(user: Any, fixture_id: int) -> Fixture:
    """`fixture_for` for the routes every steward and loggist hits at once in a crisis minute (a
    report to the log; the supporters' queue, read by every control-room screen at each change):
    the fixture with its ground and shares kept a few seconds per process (kept.py) rather than
    five queries a read. The same rule decides who may see it."""
    fixture = fixture_kept(fixture_id)
    if fixture is None:
        raise Http404
    require(can_view_fixture(user, fixture))
    return fixture


def fixture_with_shares(fixture_id: int) -> Fixture:
    """A fixture with what deciding who may view it needs (its ground, its shares), for a caller
    that checks `can_view_fixture` per user itself: the live sockets' admission, which keeps
    one copy per process for a few seconds (live/admission.py). Http404 if there is none."""
    return get_object_or_404(
        Fixture.objects.select_related("ground").prefetch_related("shares"), pk=fixture_id
    )


def fixture_zone_uses(fixture: Fixture) -> dict[int, str]:
    """zone id -> home / away / buffer for this fixture."""
    return {fz.zone_id: fz.use for fz in fixture.zones.all()}


def fixture_for_planning(user: Any, fixture_id: int) -> Fixture:
    """A fixture the user may change (its ground's safety officer)."""
    fixture = fixture_for(user, fixture_id)
    require(can_plan_fixtures(user, fixture.ground))
    return fixture


def fixture_safe_capacities(
    fixture: Fixture, *, evacuation_minutes: float | None = None
) -> dict[int, Capacity]:
    """zone id -> the Green Guide capacity of each zone the fixture uses (venues/capacity.py)."""
    zone_ids = fixture.zones.values_list("zone_id", flat=True)
    return zone_capacities(fixture.ground, zone_ids, evacuation_minutes=evacuation_minutes)


def fixture_for_risk(user: Any, fixture_id: int) -> Fixture:
    """A fixture whose risk assessment and match plan the user may read."""
    fixture = fixture_for(user, fixture_id)
    require(can_read_plan(user, fixture))
    return fixture


def risk_assessments(fixture: Fixture) -> QuerySet[RiskAssessment]:
    """Every assessment kept for the fixture, latest first."""
    return fixture.assessments.select_related("assessed_by").order_by("-assessed_at", "-pk")


def plan_current(fixture: Fixture) -> PlanVersion | None:
    """The latest version of the fixture's plan, with its signatures."""
    return (
        fixture.plan_versions.select_related("created_by", "assessment")
        .prefetch_related("sign_offs__user")
        .order_by("-number")
        .first()
    )


def plan_versions(fixture: Fixture) -> QuerySet[PlanVersion]:
    return fixture.plan_versions.select_related("created_by").prefetch_related("sign_offs__user")


def plan_signatures(version: PlanVersion) -> dict[str, PlanSignOff | None]:
    """Each signing role -> its signature on this version (None: still to sign)."""
    signed = {sign_off.role: sign_off for sign_off in version.sign_offs.all()}
    return {role: signed.get(role) for role in sorted(PLAN_SIGNERS)}


def plan_is_signed_off(version: PlanVersion) -> bool:
    return all(plan_signatures(version).values())


def open_at(kickoffs: Iterable[tuple[int, datetime]], moment: datetime) -> int | None:
    """Of these (match id, kick-off) pairs, the match whose kick-off is nearest `moment`, if
    `moment` falls between SAFEGROUND_ENTRY_OPENS_HOURS before that kick-off and
    SAFEGROUND_ENTRY_CLOSES_HOURS after: the match on at a ground (entry reads it per scan from
    its kept kick-offs, entry.runtime.lookups.fixture_at)."""
    opens = timedelta(hours=settings.SAFEGROUND_ENTRY_OPENS_HOURS)
    closes = timedelta(hours=settings.SAFEGROUND_ENTRY_CLOSES_HOURS)
    candidates = [
        (abs(kickoff - moment), fixture_id)
        for fixture_id, kickoff in kickoffs
        if kickoff - opens <= moment <= kickoff + closes
    ]
    return min(candidates)[1] if candidates else None


def fixtures_open(now: datetime) -> QuerySet[Fixture]:
    """The matches whose turnstiles are open at `now`: from SAFEGROUND_ENTRY_OPENS_HOURS before
    kick-off to SAFEGROUND_ENTRY_CLOSES_HOURS after."""
    opens = timedelta(hours=settings.SAFEGROUND_ENTRY_OPENS_HOURS)
    closes = timedelta(hours=settings.SAFEGROUND_ENTRY_CLOSES_HOURS)
    return Fixture.objects.filter(kickoff__gte=now - closes, kickoff__lte=now + opens)


# Kept a few seconds: every report of a supporters' flood asks it.
_on_now = Kept("SAFEGROUND_MATCH_ON_NOW_CACHE_SECONDS")


def match_on_now(ground: Ground) -> Fixture | None:
    """The ground's match on now (open_at), if any."""
    return _on_now.get(ground.pk, lambda: _match_on_now_read(ground))


def _match_on_now_read(ground: Ground) -> Fixture | None:
    now = timezone.now()
    near = fixtures_open(now).filter(ground=ground)
    kept = {f.pk: f for f in near.select_related("home_club", "away_club", "ground")}
    found = open_at(((pk, f.kickoff) for pk, f in kept.items()), now)
    return None if found is None else kept[found]
