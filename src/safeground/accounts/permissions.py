"""What each role may do: one function per action, used by pages and the API alike.

Nothing else decides access. Templates receive the answers, they never ask roles themselves.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet

from .models import Membership, Role

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


def role_holders(organisation_id: int, *roles: str) -> QuerySet[Membership]:
    """Who holds any of these roles at the organisation: their memberships, users read along."""
    return Membership.objects.filter(
        organisation_id=organisation_id, role__in=roles
    ).select_related("user")


def role_label(role: str) -> str:
    """A role as people read it ("Safety officer"), in their language; never its stored value."""
    return str(Role(role).label)


def memberships(user: Any) -> frozenset[tuple[int, str]]:
    """(organisation id, role) pairs of the user, read once per request and kept on the user."""
    if not getattr(user, "is_authenticated", False):
        return frozenset()
    cached = getattr(user, "_safeground_memberships", None)
    if cached is None:
        cached = frozenset(user.memberships.values_list("organisation_id", "role"))
        user._safeground_memberships = cached
    return cached


def memberships_load(users: Iterable[Any]) -> None:
    """Read the memberships of many users in one query and keep them on each, as `memberships`
    would one by one (a reconnect storm's sockets, live/admission.py)."""
    users = [user for user in users if getattr(user, "is_authenticated", False)]
    found: dict[int, set[tuple[int, str]]] = {user.pk: set() for user in users}
    rows = Membership.objects.filter(user_id__in=list(found)).values_list(
        "user_id", "organisation_id", "role"
    )
    for user_id, organisation_id, role in rows:
        found[user_id].add((organisation_id, role))
    for user in users:
        user._safeground_memberships = frozenset(found[user.pk])


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


# Setting up the season: fixtures, their layout and shares, their tickets.
FIXTURE_PLANNERS = frozenset({Role.SAFETY_OFFICER})


def can_plan_fixtures(user: Any, ground: Ground) -> bool:
    """Add and edit the ground's fixtures, share them, import their tickets."""
    return bool(roles_at(user, ground.organisation_id) & FIXTURE_PLANNERS)


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


def can_read_checkpoints(user: Any, fixture: Fixture) -> bool:
    """The log's signed checkpoints (counts and hashes, no personal data): every organisation
    working the match may see and download them and keep its copy, as for the control room."""
    return can_open_control_room(user, fixture)


# Signing the log's head on request or at full time: whoever runs the control room.
LOG_SIGNERS = frozenset({Role.SAFETY_OFFICER, Role.CONTROL_OPERATOR})


def can_sign_log(user: Any, fixture: Fixture) -> bool:
    return bool(roles_at(user, fixture.ground.organisation_id) & LOG_SIGNERS)


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


# Stewards' phones, posts and broadcasts (the control room sends; stewards receive and answer).
POST_ASSIGNERS = frozenset({Role.SAFETY_OFFICER, Role.CONTROL_OPERATOR, Role.STEWARD_SUPERVISOR})
BROADCASTERS = frozenset({Role.SAFETY_OFFICER, Role.CONTROL_OPERATOR})
STEWARD_PAGE_ROLES = frozenset({Role.STEWARD, Role.STEWARD_SUPERVISOR})


def can_open_steward_page(user: Any, fixture: Fixture) -> bool:
    return bool(roles_at(user, fixture.ground.organisation_id) & STEWARD_PAGE_ROLES)


def can_assign_posts(user: Any, fixture: Fixture) -> bool:
    return bool(roles_at(user, fixture.ground.organisation_id) & POST_ASSIGNERS)


def can_send_broadcast(user: Any, fixture: Fixture) -> bool:
    return bool(roles_at(user, fixture.ground.organisation_id) & BROADCASTERS)


def can_receive_alerts(user: Any) -> bool:
    """Push alerts on a phone: whoever has a steward page at some ground (steward, supervisor)."""
    return any(role in STEWARD_PAGE_ROLES for _, role in memberships(user))


def can_acknowledge_broadcast(user: Any, fixture: Fixture, recipient_ids: list[int]) -> bool:
    return getattr(user, "pk", None) in recipient_ids and can_view_fixture(user, fixture)


# The banned-supporter register (docs/adr/0004-ban-register.md). Criminal-offence data: only the
# club's ban officers and its safety officer read it; stewards, police and the away club do not.
# A ban officer proposes; another ban officer or the safety officer approves (never the proposer);
# an appeal is decided by a ban officer or safety officer who neither proposed nor approved it.
REGISTER_READERS = frozenset({Role.BAN_OFFICER, Role.SAFETY_OFFICER})
BAN_PROPOSERS = frozenset({Role.BAN_OFFICER})
BAN_APPROVERS = frozenset({Role.BAN_OFFICER, Role.SAFETY_OFFICER})
APPEAL_RECORDERS = frozenset({Role.BAN_OFFICER})
APPEAL_DECIDERS = frozenset({Role.BAN_OFFICER, Role.SAFETY_OFFICER})
FLAG_REVIEWERS = frozenset({Role.BAN_OFFICER})
ACCESS_RECORD_READERS = frozenset({Role.AUDITOR})


def register_organisation_ids(user: Any) -> set[int]:
    """The organisations whose register the user may search and read."""
    return {org for org, role in memberships(user) if role in REGISTER_READERS}


def can_use_register(user: Any) -> bool:
    return bool(register_organisation_ids(user))


def can_read_person(user: Any, organisation_id: int) -> bool:
    """A person on the register of this organisation (a stated reason is still needed)."""
    return bool(roles_at(user, organisation_id) & REGISTER_READERS)


def can_propose_ban(user: Any, organisation_id: int) -> bool:
    return bool(roles_at(user, organisation_id) & BAN_PROPOSERS)


def can_approve_ban(user: Any, organisation_id: int, *, proposed_by_id: int) -> bool:
    """Another user with the approval right: never the proposer."""
    if proposed_by_id == getattr(user, "pk", None):
        return False
    return bool(roles_at(user, organisation_id) & BAN_APPROVERS)


def can_record_appeal(user: Any, organisation_id: int) -> bool:
    return bool(roles_at(user, organisation_id) & APPEAL_RECORDERS)


def can_decide_appeal(
    user: Any, organisation_id: int, *, proposed_by_id: int, approved_by_id: int | None
) -> bool:
    """A third user: neither the proposer nor the approver."""
    if getattr(user, "pk", None) in {proposed_by_id, approved_by_id}:
        return False
    return bool(roles_at(user, organisation_id) & APPEAL_DECIDERS)


def can_review_flags(user: Any, organisation_id: int) -> bool:
    """Flagged tickets of the organisation's matches: the ban officer confirms or clears them."""
    return bool(roles_at(user, organisation_id) & FLAG_REVIEWERS)


def flag_organisation_ids(user: Any) -> set[int]:
    return {org for org, role in memberships(user) if role in FLAG_REVIEWERS}


# A subject-access request (UK GDPR Art. 15): everything held about one person, in one file.
# The ban officers who answer for the register; the safety officer reads records but does not
# export them whole. There is no data-protection role yet: it would be added here.
SUBJECT_ACCESS_EXPORTERS = frozenset({Role.BAN_OFFICER})


def can_export_subject_access(user: Any, organisation_id: int) -> bool:
    return bool(roles_at(user, organisation_id) & SUBJECT_ACCESS_EXPORTERS)


def access_record_organisation_ids(user: Any) -> set[int]:
    """The auditor searches the access records of their organisation; they change nothing."""
    return {org for org, role in memberships(user) if role in ACCESS_RECORD_READERS}


# Risk assessment and the match plan. Everyone working the match reads them except stewards
# (their post and briefing come to their page) and the away club. The home club's safety officer
# owns the plan; it and the police commander (of the force policing the match) sign it off.
PLAN_SIGNERS = frozenset({Role.SAFETY_OFFICER, Role.POLICE_COMMANDER})


def can_read_plan(user: Any, fixture: Fixture) -> bool:
    return bool(roles_for_fixture(user, fixture, police_only=True) - {Role.STEWARD})


def can_assess_risk(user: Any, fixture: Fixture) -> bool:
    return bool(plan_sign_roles(user, fixture))


def can_edit_plan(user: Any, fixture: Fixture) -> bool:
    return Role.SAFETY_OFFICER in roles_at(user, fixture.ground.organisation_id)


def plan_sign_roles(user: Any, fixture: Fixture) -> set[str]:
    """The roles in which the user may sign the fixture's plan off: the home club's safety
    officer, the policing force's commander."""
    roles: set[str] = set()
    if Role.SAFETY_OFFICER in roles_at(user, fixture.ground.organisation_id):
        roles.add(Role.SAFETY_OFFICER)
    if Role.POLICE_COMMANDER in roles_for_fixture(user, fixture, police_only=True) - roles_at(
        user, fixture.ground.organisation_id
    ):
        roles.add(Role.POLICE_COMMANDER)
    return roles


# Identify and sanction (casework). Who sat near an incident is criminal-offence data in the
# making: the home club's safety officer and ban officers, and the officers of the force policing
# the match, may look it up (each look-up recorded with its reason); stewards, loggists,
# supervisors, auditors and the away club may not. The same people work the match's cases and
# see its evidence locker; only a ban officer proposes a club ban from a case (the register's rule).
IDENTIFIERS = frozenset(
    {Role.SAFETY_OFFICER, Role.BAN_OFFICER, Role.POLICE_COMMANDER, Role.POLICE_SPOTTER}
)


def can_identify(user: Any, fixture: Fixture) -> bool:
    """See the ticket holders seated near an incident, by name (a stated reason is still needed)."""
    return bool(roles_for_fixture(user, fixture, police_only=True) & IDENTIFIERS)


def can_work_cases(user: Any, fixture: Fixture) -> bool:
    """Open and work the match's cases, add evidence, see its evidence locker and export bundles."""
    return bool(roles_for_fixture(user, fixture, police_only=True) & IDENTIFIERS)


# Reports (post-match report, season dashboard, exports): everyone working the match who reads
# the plan (stewards and the away club do not); the season of a ground, its club's staff. Names
# of banned people in an export: the register's readers only, each read recorded.
SEASON_READERS = frozenset(GROUND_ROLES)


def can_read_match_report(user: Any, fixture: Fixture) -> bool:
    return can_read_plan(user, fixture)


def can_read_season(user: Any, ground: Ground) -> bool:
    return bool(roles_at(user, ground.organisation_id) & SEASON_READERS)


def can_export_people(user: Any, organisation_id: int) -> bool:
    """Names and dates of birth in an export of bans: criminal-offence data."""
    return can_read_person(user, organisation_id)


def is_home_staff(user: Any, fixture: Fixture) -> bool:
    """A member of the home club (the ground's organisation), in any role: who sees the log's
    home-only entries (incidents.selectors.home_only_entries), live and in casework, reports and
    exports, and in whose figures they count."""
    return fixture.ground.organisation_id in organisation_ids(user)


# Steward deployment, pre-match checks and the briefing (the deployment app). The control room
# posts stewards and prepares the checks; stewards check in and do their checks from their phone;
# a supervisor (or the safety officer) sends a check back; only the safety officer marks the plan
# ready, and only they override a critical check that failed or was not done.
DEPLOYMENT_READERS = frozenset(
    {Role.SAFETY_OFFICER, Role.CONTROL_OPERATOR, Role.STEWARD_SUPERVISOR, Role.AUDITOR}
)
CHECK_SENDERS_BACK = frozenset({Role.SAFETY_OFFICER, Role.STEWARD_SUPERVISOR})


def can_view_deployment(user: Any, fixture: Fixture) -> bool:
    """Who is where, who has checked in, the checks: the home club's control-room staff."""
    return bool(roles_at(user, fixture.ground.organisation_id) & DEPLOYMENT_READERS)


def can_check_in(user: Any, fixture: Fixture) -> bool:
    """A steward or supervisor checks in at their post and does their checks, from the phone."""
    return can_open_steward_page(user, fixture)


def can_record_any_check(user: Any, fixture: Fixture) -> bool:
    """A supervisor may record a check at any post (a steward only at their own)."""
    return Role.STEWARD_SUPERVISOR in roles_at(user, fixture.ground.organisation_id)


def can_prepare_checks(user: Any, fixture: Fixture) -> bool:
    return can_assign_posts(user, fixture)


def can_send_check_back(user: Any, fixture: Fixture) -> bool:
    return bool(roles_at(user, fixture.ground.organisation_id) & CHECK_SENDERS_BACK)


def can_mark_plan_ready(user: Any, fixture: Fixture) -> bool:
    """The safety officer; the same person overrides a critical check, with a reason."""
    return can_edit_plan(user, fixture)


def can_read_briefing(user: Any, fixture: Fixture) -> bool:
    """The briefing carries the plan: whoever may read the plan (not stewards, not the away
    club: a steward's own post and the summary come to their phone)."""
    return can_read_plan(user, fixture)


# Devices (turnstiles, scanners): the organisation's safety officer sees its keys and revokes one
# (a lost or stolen scanner); the key itself is never shown again after it is made.
DEVICE_KEEPERS = frozenset({Role.SAFETY_OFFICER})


def device_organisation_ids(user: Any) -> set[int]:
    return {org for org, role in memberships(user) if role in DEVICE_KEEPERS}


def can_manage_devices(user: Any, organisation_id: int) -> bool:
    return organisation_id in device_organisation_ids(user)


# The decision log (JESIP joint decision logging). Whoever works the match in the control room
# reads it (the police and the away club too, by the log's home-only rule), stewards do not; the
# loggist (or a commander) records a commander's decision; the commanders who make decisions are
# the home club's safety officer and the policing force's commander. Radio down is the control
# room's switch (the safety officer or the loggist, naming the commander who decided it).
DECISION_LOGGERS = frozenset({Role.SAFETY_OFFICER, Role.CONTROL_OPERATOR, Role.POLICE_COMMANDER})


def can_read_decisions(user: Any, fixture: Fixture) -> bool:
    return can_open_control_room(user, fixture)


def can_log_decisions(user: Any, fixture: Fixture) -> bool:
    return bool(roles_for_fixture(user, fixture, police_only=True) & DECISION_LOGGERS)


def can_make_decisions(user: Any, fixture: Fixture) -> bool:
    """A commander of this match: the home club's safety officer or the policing force's
    commander (plan_sign_roles: the same two who sign the plan off)."""
    return bool(plan_sign_roles(user, fixture))


def can_close_stand(user: Any, fixture: Fixture) -> bool:
    """Close a stand and evacuate it, or reopen it once all clear: a commander's decision (the
    safety officer or the police commander), logged as one."""
    return can_make_decisions(user, fixture)


def can_switch_radio(user: Any, fixture: Fixture) -> bool:
    return bool(roles_at(user, fixture.ground.organisation_id) & BROADCASTERS)


def can_declare_major_incident(user: Any, fixture: Fixture) -> bool:
    """JESIP: a commander declares a major incident and sends its M/ETHANE report, and corrects
    it: the home club's safety officer or the policing force's commander, never the loggist on
    their behalf (plan_sign_roles: the same two who sign the plan off)."""
    return bool(plan_sign_roles(user, fixture))


# Supporters' reports (the supporters app): the control room triages the queue (accept, merge,
# dismiss, task a steward) and reads a contact a supporter chose to give; the safety officer
# and the control room print the seats' QR sheets. The seat page and the text line are public.
SUPPORTER_TRIAGERS = frozenset({Role.SAFETY_OFFICER, Role.CONTROL_OPERATOR})


def can_triage_supporter_reports(user: Any, fixture: Fixture) -> bool:
    return bool(roles_at(user, fixture.ground.organisation_id) & SUPPORTER_TRIAGERS)


def can_print_seat_codes(user: Any, ground: Ground) -> bool:
    return bool(roles_at(user, ground.organisation_id) & SUPPORTER_TRIAGERS)


# What partner agencies are told (the partners app's CAP feed): every organisation working the
# match reads the alerts of the fixtures shared with it (not its stewards: they hear on their
# phones), the home club alone its home-only ones; an organisation's lead sets where its alerts
# are pushed.
PUSH_SETTERS = frozenset({Role.SAFETY_OFFICER, Role.POLICE_COMMANDER})


def can_read_partner_alerts(user: Any, fixture: Fixture, *, home_only: bool = False) -> bool:
    if home_only and not is_home_staff(user, fixture):
        return False
    return bool(roles_for_fixture(user, fixture) - {Role.STEWARD})


def partner_alert_organisation_ids(user: Any) -> set[int]:
    """The organisations whose alerts the user reads (any role there but steward's)."""
    return {org for org, role in memberships(user) if role != Role.STEWARD}


def organisations_told(fixture: Fixture, *, home_only: bool) -> set[int]:
    """The organisations an alert of the fixture goes to: the home club, and unless it is
    home-only, every organisation the fixture is shared with."""
    told = {fixture.ground.organisation_id}
    return told if home_only else told | set(fixture.shared_organisation_ids())


def can_set_partner_push(user: Any, organisation_id: int) -> bool:
    return bool(roles_at(user, organisation_id) & PUSH_SETTERS)
