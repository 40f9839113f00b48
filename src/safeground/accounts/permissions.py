"""What each role may do: one function per action, used by pages and the API alike.

Nothing else decides access. Templates receive the answers, they never ask roles themselves.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.core.exceptions import PermissionDenied

from .models import Role

if TYPE_CHECKING:
    from safeground.matches.models import Fixture
    from safeground.venues.models import Ground

# Roles whose accounts reach criminal-offence data or command decisions: TOTP when required.
SECOND_FACTOR_ROLES = frozenset(
    {Role.SAFETY_OFFICER, Role.POLICE_COMMANDER, Role.BAN_OFFICER, Role.AUDITOR}
)
# Club staff who work with the whole ground plan (a steward sees their own post instead).
GROUND_ROLES = frozenset(
    {
        Role.SAFETY_OFFICER,
        Role.CONTROL_OPERATOR,
        Role.STEWARD_SUPERVISOR,
        Role.BAN_OFFICER,
        Role.AUDITOR,
    }
)


def memberships(user: Any) -> frozenset[tuple[int, str]]:
    """(organisation id, role) pairs of the user, read once per request and kept on the user."""
    if not getattr(user, "is_authenticated", False):
        return frozenset()
    cached = getattr(user, "_safeground_memberships", None)
    if cached is None:
        cached = frozenset(user.memberships.values_list("organisation_id", "role"))
        user._safeground_memberships = cached
    return cached


def roles_at(user: Any, organisation_id: int) -> set[str]:
    return {role for org, role in memberships(user) if org == organisation_id}


def organisation_ids(user: Any) -> set[int]:
    return {org for org, _ in memberships(user)}


def needs_second_factor(user: Any) -> bool:
    return any(role in SECOND_FACTOR_ROLES for _, role in memberships(user))


def can_view_ground(user: Any, ground: Ground) -> bool:
    return bool(roles_at(user, ground.organisation_id) & GROUND_ROLES)


def can_view_fixture(user: Any, fixture: Fixture) -> bool:
    """The home club's staff, and the members of every organisation the fixture is shared with."""
    mine = organisation_ids(user)
    if fixture.ground.organisation_id in mine:
        return True
    return any(org_id in mine for org_id in fixture.shared_organisation_ids())


def require(allowed: bool) -> None:
    """Raise the 403 that pages and the API turn into a clear refusal."""
    if not allowed:
        raise PermissionDenied


def roles_for_fixture(user: Any, fixture: Fixture, *, police_only: bool = False) -> set[str]:
    """The user's roles at the home club and at the organisations the fixture is shared with."""
    orgs = {fixture.ground.organisation_id}
    for share in fixture.shares.all():
        if not police_only or share.purpose == "police":
            orgs.add(share.organisation_id)
    return {role for org, role in memberships(user) if org in orgs}


# The control-room log. Stewards report from their own page; the away club's liaison only reads.
LOG_WRITERS = frozenset(
    {
        Role.SAFETY_OFFICER,
        Role.CONTROL_OPERATOR,
        Role.STEWARD_SUPERVISOR,
        Role.STEWARD,
        Role.POLICE_COMMANDER,
        Role.POLICE_SPOTTER,
    }
)
LOG_ACTIONS: dict[str, frozenset[str]] = {
    "assign": frozenset({Role.SAFETY_OFFICER, Role.CONTROL_OPERATOR, Role.STEWARD_SUPERVISOR}),
    "escalate": frozenset(
        {
            Role.SAFETY_OFFICER,
            Role.CONTROL_OPERATOR,
            Role.STEWARD_SUPERVISOR,
            Role.POLICE_COMMANDER,
            Role.POLICE_SPOTTER,
        }
    ),
    "status": frozenset(
        {
            Role.SAFETY_OFFICER,
            Role.CONTROL_OPERATOR,
            Role.STEWARD_SUPERVISOR,
            Role.POLICE_COMMANDER,
        }
    ),
    "correct": frozenset({Role.SAFETY_OFFICER, Role.CONTROL_OPERATOR}),
}


def can_open_control_room(user: Any, fixture: Fixture) -> bool:
    """The live log and map: everyone working the match but stewards (who have their own page)."""
    return bool(roles_for_fixture(user, fixture) - {Role.STEWARD})


def can_read_log(user: Any, fixture: Fixture) -> bool:
    return can_view_fixture(user, fixture)


def can_write_log(user: Any, fixture: Fixture) -> bool:
    return bool(roles_for_fixture(user, fixture, police_only=True) & LOG_WRITERS)


def can_act_on_log(
    user: Any, fixture: Fixture, action: str, *, author_id: int | None = None
) -> bool:
    """assign / escalate / status / correct; an author may always correct their own entry."""
    if action == "correct" and author_id is not None and author_id == getattr(user, "pk", None):
        return can_write_log(user, fixture)
    return bool(roles_for_fixture(user, fixture, police_only=True) & LOG_ACTIONS[action])
