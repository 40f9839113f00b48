"""Who is on the other end of a socket: the one Viewer the socket and the REST log both use."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from safeground.accounts.permissions import is_home_staff, memberships

from .events import Viewer
from .providers import viewer_zones


def viewer_for(user: Any, fixture: Any) -> Viewer:
    return viewers_for([user], fixture)[0]


def viewers_for(users: Sequence[Any], fixture: Any) -> list[Viewer]:
    """Each user's organisations and roles among those working the fixture, and for a steward
    the zones of their post (fixed for the life of a socket: a new post takes a reconnect). The
    posts of all the users are read together."""
    home = fixture.ground.organisation_id
    working = {home, *fixture.shared_organisation_ids()}
    zones = viewer_zones(users, fixture)
    viewers = []
    for user in users:
        mine = [(org, role) for org, role in memberships(user) if org in working]
        organisation_ids = frozenset(org for org, _ in mine)
        viewers.append(
            Viewer(
                user_id=user.pk,
                organisation_ids=organisation_ids,
                roles=frozenset(role for _, role in mine),
                home_staff=is_home_staff(user, fixture),
                zone_ids=zones.get(user.pk, frozenset()),
            )
        )
    return viewers
