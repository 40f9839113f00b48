"""Every write to the register: proposing, approving, appealing, activating and expiring bans
(its retention is bans.retention). One transaction each; each leaves a ban step (for a change of
status) and an access record (docs/adr/0004-ban-register.md). Flagging tickets and deciding flags
are entry's: the register tells it of a ban in force or revoked through bans.hooks.
"""

from dataclasses import dataclass
from datetime import date

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from safeground import clock
from safeground.accounts.models import Organisation, User
from safeground.errors import SafegroundError, one_of, too_long
from safeground.venues.models import Ground

from . import hooks
from .matching import name_key
from .models import IN_FORCE, AccessRecord, Ban, BanStep, Person

Status = Ban.Status
Action = AccessRecord.Action
SCHEDULED = "scheduled task"
MAX_TEXT = 4000


class BanError(SafegroundError):
    """Input the register refuses; `field` names what is wrong (a 400 or a form error)."""

    code = "ban_refused"


class BanConflict(BanError):
    """Well formed, but refused by the state of things (409)."""

    status = 409


def access_record_write(
    *,
    user: User | None,
    action: str,
    organisation: Organisation | int,
    reason: str,
    person: Person | None = None,
    ban: Ban | None = None,
    subject: str = "",
    detail: str = "",
) -> AccessRecord:
    """The one way an access record is written: every read, export or change of a supporter's
    personal data, for the organisation whose data it is (the auditor's page is scoped by it).
    `subject` says what was read without naming anyone ("report R-ABC12", "phone ending 1234")."""
    org_id = organisation.pk if isinstance(organisation, Organisation) else organisation
    if org_id is None:
        raise ValueError("an access record needs the organisation whose data was read")
    if not subject:  # the register's own records name the row, never the person's name
        subject = f"ban #{ban.pk}" if ban else f"person #{person.pk}" if person else ""
    return AccessRecord.objects.create(
        at=timezone.now(),
        user=user,
        username=user.get_username() if user else SCHEDULED,
        organisation_id=org_id,
        action=action,
        person=person,
        ban=ban,
        subject=subject[:100],
        reason=reason,
        detail=detail[:300],
    )


def text_check(field: str, value: str, *, required: bool = True, max_length: int = MAX_TEXT) -> str:
    value = (value or "").strip()
    if required and not value:
        raise BanError(field, _("is required"))
    if len(value) > max_length:
        raise BanError(field, too_long(len(value), max_length))
    return value


def _step(ban: Ban, *, action: str, to: str, by: User | None, reason: str) -> BanStep:
    step = BanStep.objects.create(
        ban=ban,
        action=action,
        from_status=ban.status,
        to_status=to,
        by=by,
        by_name=by.get_username() if by else SCHEDULED,
        at=timezone.now(),
        reason=reason,
    )
    ban.status = to
    hooks.ban_changed(ban)
    return step


def _locked(ban: Ban) -> Ban:
    """The ban as stored now, its row locked until the transaction ends (PostgreSQL)."""
    return Ban.objects.select_for_update().select_related("person").get(pk=ban.pk)


def _expect(ban: Ban, *allowed: str) -> None:
    if ban.status not in allowed:
        wanted = " or ".join(Status(s).label.lower() for s in allowed)
        said = _("ban #%(ban)s is %(status)s; it must be %(wanted)s")
        slots = {"ban": ban.pk, "status": ban.get_status_display().lower(), "wanted": wanted}
        raise BanConflict("status", said % slots)


@transaction.atomic
def ban_propose(
    *,
    by: User,
    organisation: Organisation,
    first_names: str,
    last_name: str,
    date_of_birth: date | None,
    type: str,
    scope: str,
    starts_on: date | None,
    grounds: str,
    ends_on: date | None = None,
    is_life: bool = False,
    issued_by: str = "",
    ground: Ground | None = None,
    supporter_number: str = "",
    reporting_conditions: str = "",
    control_periods: str = "",
    today: date | None = None,
) -> Ban:
    """A ban officer proposes a ban; it does nothing until another user approves it.

    The person is found on the register (same name once folded, same date of birth) or added.
    """
    today = today or timezone.localdate()
    first_names = text_check("first_names", first_names, max_length=100)
    last_name = text_check("last_name", last_name, max_length=100)
    date_of_birth = _birth_date_check(date_of_birth, today)
    if type not in Ban.Type.values:
        raise BanError("type", one_of(Ban.Type.values))
    if scope not in Ban.Scope.values:
        raise BanError("scope", one_of(Ban.Scope.values))
    if scope == Ban.Scope.GROUND:
        ground = _club_ground(ground, organisation)
    starts_on = _term_check(
        type=type,
        starts_on=starts_on,
        ends_on=ends_on,
        is_life=is_life,
        reporting_conditions=reporting_conditions,
    )
    grounds = text_check("grounds", grounds)
    supporter_number = text_check(
        "supporter_number", supporter_number, required=False, max_length=40
    )
    issued_by = (
        text_check("issued_by", issued_by, required=False, max_length=200) or organisation.name
    )
    person = _person_found_or_added(
        organisation=organisation,
        first_names=first_names,
        last_name=last_name,
        date_of_birth=date_of_birth,
        supporter_number=supporter_number,
    )
    ban = Ban(
        person=person,
        organisation=organisation,
        type=type,
        issued_by=issued_by,
        scope=scope,
        ground=ground if scope == Ban.Scope.GROUND else None,
        starts_on=starts_on,
        ends_on=ends_on,
        is_life=is_life,
        grounds=grounds,
        reporting_conditions=reporting_conditions.strip(),
        control_periods=control_periods.strip(),
        status=Status.PROPOSED,
        proposed_by=by,
    )
    ban.save()
    _proposal_recorded(ban, by=by)
    return ban


def _proposal_recorded(ban: Ban, *, by: User) -> None:
    """The proposal's first ban step (from no status) and its access record, its grounds the
    reason of both."""
    BanStep.objects.create(
        ban=ban,
        action="proposed",
        to_status=Status.PROPOSED,
        by=by,
        by_name=by.get_username(),
        at=timezone.now(),
        reason=ban.grounds,
    )
    access_record_write(
        user=by, action=Action.PROPOSE, organisation=ban.organisation, person=ban.person, ban=ban,
        reason=ban.grounds,
    )  # fmt: skip


def _birth_date_check(date_of_birth: date | None, today: date) -> date:
    if date_of_birth is None:
        raise BanError("date_of_birth", _("is required"))
    if date_of_birth > today or date_of_birth.year < 1900:
        raise BanConflict(
            "date_of_birth",
            _("%(date)s is not a plausible birth date") % {"date": clock.day_iso(date_of_birth)},
        )
    return date_of_birth


def _club_ground(ground: Ground | None, organisation: Organisation) -> Ground:
    """The ground a ban from one ground covers: the one given, or else the club's first; never
    another club's."""
    if ground is None:
        ground = Ground.objects.filter(organisation=organisation).first()
    if ground is None or ground.organisation_id != organisation.pk:
        raise BanConflict("ground", _("a ban from this ground needs one of the club's grounds"))
    return ground


def _term_check(
    *,
    type: str,
    starts_on: date | None,
    ends_on: date | None,
    is_life: bool,
    reporting_conditions: str,
) -> date:
    """The start date, once the term holds together: a start, and an end or a life ban, not
    both; a banning order runs for a fixed term and has reporting conditions."""
    if starts_on is None:
        raise BanError("starts_on", _("is required"))
    if is_life and ends_on is not None:
        raise BanConflict("ends_on", _("a life ban has no end date"))
    if not is_life and ends_on is None:
        raise BanConflict("ends_on", _("give an end date, or make it a life ban"))
    if ends_on is not None and ends_on < starts_on:
        raise BanConflict("ends_on", _("is before the start date"))
    if type == Ban.Type.BANNING_ORDER:
        if is_life:
            raise BanConflict("is_life", _("a banning order runs for a fixed term (3 to 10 years)"))
        if not (reporting_conditions or "").strip():
            raise BanConflict("reporting_conditions", _("is required"))
        text_check("reporting_conditions", reporting_conditions)
    return starts_on


def _person_found_or_added(
    *,
    organisation: Organisation,
    first_names: str,
    last_name: str,
    date_of_birth: date,
    supporter_number: str,
) -> Person:
    """The person on the club's register with the same name once folded and the same date of
    birth (one person, however their name was typed), or a new one; a supporter number given
    fills one the register lacks, never replaces it."""
    key = name_key(f"{first_names} {last_name}")
    person = next(
        (
            p
            for p in Person.objects.filter(
                organisation=organisation, date_of_birth=date_of_birth, erased_at__isnull=True
            )
            if name_key(p.full_name) == key
        ),
        None,
    )
    if person is None:
        person = Person.objects.create(
            organisation=organisation,
            first_names=first_names,
            last_name=last_name,
            date_of_birth=date_of_birth,
            supporter_number=supporter_number,
        )
    elif supporter_number and not person.supporter_number:
        person.supporter_number = supporter_number
        person.save(update_fields=["supporter_number"])
    return person


@transaction.atomic
def ban_approve(*, ban: Ban, by: User, reason: str, today: date | None = None) -> Ban:
    """Another user approves; a ban whose start date has come is in force at once."""
    reason = text_check("reason", reason)
    ban = _locked(ban)
    _expect(ban, Status.PROPOSED)
    if by.pk == ban.proposed_by_id:
        raise BanConflict("approved_by", _("the proposer may not approve their own ban"))
    _step(ban, action="approved", to=Status.APPROVED, by=by, reason=reason)
    ban.approved_by = by
    ban.save(update_fields=["status", "approved_by"])
    access_record_write(
        user=by, action=Action.APPROVE, organisation=ban.organisation_id, person=ban.person,
        ban=ban, reason=reason,
    )  # fmt: skip
    if ban.starts_on <= (today or timezone.localdate()):
        _activate(ban, by=by)
    return ban


@transaction.atomic
def ban_reject(*, ban: Ban, by: User, reason: str, today: date | None = None) -> Ban:
    reason = text_check("reason", reason)
    ban = _locked(ban)
    _expect(ban, Status.PROPOSED)
    if by.pk == ban.proposed_by_id:
        raise BanConflict("approved_by", _("the proposer may not decide their own proposal"))
    _step(ban, action="rejected", to=Status.REJECTED, by=by, reason=reason)
    ban.ended_on = today or timezone.localdate()
    ban.save(update_fields=["status", "ended_on"])
    access_record_write(
        user=by, action=Action.REJECT, organisation=ban.organisation_id, person=ban.person,
        ban=ban, reason=reason,
    )  # fmt: skip
    return ban


@transaction.atomic
def ban_appeal(*, ban: Ban, by: User, reason: str) -> Ban:
    """Record that the person appeals. The ban stays in force until the appeal is decided."""
    reason = text_check("reason", reason)
    ban = _locked(ban)
    _expect(ban, Status.ACTIVE)
    _step(ban, action="appealed", to=Status.APPEALED, by=by, reason=reason)
    ban.save(update_fields=["status"])
    access_record_write(
        user=by, action=Action.APPEAL, organisation=ban.organisation_id, person=ban.person,
        ban=ban, reason=reason,
    )  # fmt: skip
    return ban


@transaction.atomic
def ban_appeal_decide(
    *, ban: Ban, by: User, outcome: str, reason: str, today: date | None = None
) -> Ban:
    """A third user (neither proposer nor approver) upholds or revokes the ban."""
    reason = text_check("reason", reason)
    if outcome not in {Status.UPHELD, Status.REVOKED}:
        raise BanError("outcome", _("upheld or revoked"))
    ban = _locked(ban)
    _expect(ban, Status.APPEALED)
    if by.pk in {ban.proposed_by_id, ban.approved_by_id}:
        raise BanConflict(
            "decided_by",
            _("an appeal is decided by someone who neither proposed nor approved the ban"),
        )
    _step(ban, action=outcome, to=outcome, by=by, reason=reason)
    ban.appeal_decided_by = by
    fields = ["status", "appeal_decided_by"]
    if outcome == Status.REVOKED:
        ban.ended_on = today or timezone.localdate()
        fields.append("ended_on")
        hooks.ban_revoked(ban, by, timezone.now())  # its open flags are cleared
    ban.save(update_fields=fields)
    access_record_write(
        user=by, action=Action.DECIDE_APPEAL, organisation=ban.organisation_id,
        person=ban.person, ban=ban, reason=reason, detail=outcome,
    )  # fmt: skip
    return ban


def _activate(ban: Ban, *, by: User | None) -> int:
    """In force from today: step, access record, and its holders matched. Returns new flags."""
    reason = "start date reached" if by is None else "approved; start date reached"
    _step(ban, action="activated", to=Status.ACTIVE, by=by, reason=reason)
    ban.save(update_fields=["status"])
    access_record_write(
        user=by, action=Action.ACTIVATE, organisation=ban.organisation_id, person=ban.person,
        ban=ban, reason=reason,
    )  # fmt: skip
    return hooks.ban_in_force(ban)


@dataclass(frozen=True)
class RollForward:
    activated: int
    expired: int
    flagged: int


@transaction.atomic
def bans_roll_forward(*, today: date | None = None) -> RollForward:
    """Daily: approved bans whose start has come go into force; ended bans expire."""
    today = today or timezone.localdate()
    activated = flagged = expired = 0
    due = Ban.objects.select_for_update().select_related("person")
    for ban in due.filter(status=Status.APPROVED, starts_on__lte=today):
        flagged += _activate(ban, by=None)
        activated += 1
    for ban in due.filter(status__in=IN_FORCE, ends_on__lt=today):
        _step(ban, action="expired", to=Status.EXPIRED, by=None, reason="end date passed")
        ban.ended_on = ban.ends_on
        ban.save(update_fields=["status", "ended_on"])
        access_record_write(
            user=None, action=Action.EXPIRE, organisation=ban.organisation_id,
            person=ban.person, ban=ban, reason="end date passed",
        )  # fmt: skip
        expired += 1
    return RollForward(activated=activated, expired=expired, flagged=flagged)
