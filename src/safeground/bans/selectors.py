"""Reads of the register. A read of a person fetches, checks the reader may, and writes the access
record with the stated reason, in one function: no page can show a person without all three.
"""

from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from django.db import transaction
from django.db.models import Count, Q, QuerySet
from django.http import Http404
from django.utils.translation import gettext as _

from safeground import clock
from safeground.accounts.permissions import (
    access_record_organisation_ids,
    can_export_subject_access,
    can_read_person,
    register_organisation_ids,
    require,
)
from safeground.errors import one_of, too_long

from . import hooks
from .dates import parse_date
from .matching import name_key
from .models import AccessRecord, Ban, Person
from .services import BanError, access_record_write

Action = AccessRecord.Action
MAX_REASON = 500
MIN_REASON = 5
SEARCH_LISTED = 100


def reason_check(reason: str) -> str:
    reason = (reason or "").strip()
    if len(reason) < MIN_REASON:
        raise BanError("reason", _("say why you need this record (a few words at least)"))
    if len(reason) > MAX_REASON:
        raise BanError("reason", too_long(len(reason), MAX_REASON))
    return reason


def person_summary(user: Any, person_id: int) -> Person:
    """The person, checked, without their details: for the reason form (nothing is shown)."""
    person = Person.objects.filter(pk=person_id).first()
    if person is None:
        raise Http404(_("no such person"))
    require(can_read_person(user, person.organisation_id))
    return person


@transaction.atomic
def person_read(*, user: Any, person_id: int, reason: str) -> Person:
    """A person's record with their bans and each ban's history; the read is recorded."""
    person = person_summary(user, person_id)
    access_record_write(
        user=user,
        action=Action.READ,
        organisation=person.organisation_id,
        person=person,
        reason=reason_check(reason),
    )
    return Person.objects.prefetch_related(
        "bans__steps", "bans__proposed_by", "bans__approved_by", "bans__ground"
    ).get(pk=person.pk)


def ban_for(user: Any, ban_id: int) -> Ban:
    """A ban (without reading its person's record); the caller checks the action's permission."""
    ban = Ban.objects.select_related("person").filter(pk=ban_id).first()
    if ban is None:
        raise Http404(_("no such ban"))
    require(can_read_person(user, ban.organisation_id))
    return ban


@transaction.atomic
def register_search(*, user: Any, query: str, reason: str) -> list[Person]:
    """People whose name, supporter number or date of birth (yyyy-mm-dd or dd/mm/yyyy) fits the
    query, in the user's registers, after a stated reason. The search is recorded: what was
    looked for, which people were listed (names and dates of birth), and why."""
    query = query.strip()[:100]
    orgs = register_organisation_ids(user)
    require(bool(orgs))
    if not query:
        return []
    reason = reason_check(reason)
    people = Person.objects.filter(organisation__in=orgs, erased_at__isnull=True)
    day = _as_date(query)
    if day is not None:
        found = list(people.filter(date_of_birth=day))
    else:
        # Folded words, so "sean" finds "Seán" (a club's register is small enough to scan).
        words = name_key(query).split()
        found = [
            p
            for p in people.order_by("last_name", "first_names")
            if p.supporter_number.lower() == query.lower()
            or all(word in name_key(p.full_name) for word in words)
        ]
    found = found[:SEARCH_LISTED]
    for org in sorted(orgs):
        shown = [p.pk for p in found if p.organisation_id == org]
        access_record_write(
            user=user,
            action=Action.SEARCH,
            organisation=org,
            reason=reason,
            detail=f"query '{query}': {len(shown)} listed"
            + (f" (people {', '.join(f'#{pk}' for pk in shown)})" if shown else ""),
        )
    return found


def _as_date(text: str) -> date | None:
    if not any(c.isdigit() for c in text) or any(c.isalpha() for c in text):
        return None
    found, _problem = parse_date(text, today=date.max)
    return found


@dataclass(frozen=True)
class Queue:
    proposals: list[Ban]
    appeals: list[Ban]
    open_flags: int
    counts: dict[str, int]


def register_queue(user: Any) -> Queue:
    """What waits for someone: proposals, appeals, flags (no names), and the register's counts."""
    orgs = register_organisation_ids(user)
    require(bool(orgs))
    bans = Ban.objects.filter(organisation__in=orgs).select_related("proposed_by", "approved_by")
    counts = dict(
        bans.values_list("status").annotate(n=Count("pk")).values_list("status", "n").order_by()
    )
    return Queue(
        proposals=list(bans.filter(status=Ban.Status.PROPOSED).order_by("created_at")),
        appeals=list(bans.filter(status=Ban.Status.APPEALED).order_by("created_at")),
        open_flags=hooks.flags_awaiting(user),
        counts={str(label): counts.get(value, 0) for value, label in Ban.Status.choices},
    )


def access_records_search(
    *,
    user: Any,
    username: str = "",
    action: str = "",
    person_id: int | None = None,
    subject: str = "",
    since: date | None = None,
    until: date | None = None,
) -> QuerySet[AccessRecord]:
    """The auditor's search of the access records of their organisations (newest first): every
    app's reads and exports of personal data, one trail (ADR 0020)."""
    orgs = access_record_organisation_ids(user)
    require(bool(orgs))
    records = AccessRecord.objects.filter(organisation__in=orgs).select_related("person", "ban")
    if username:
        records = records.filter(username__iexact=username.strip())
    if action:
        records = records.filter(action=action)
    if person_id:
        records = records.filter(person_id=person_id)
    if subject.strip():
        records = records.filter(subject__icontains=subject.strip())
    if since:
        records = records.filter(at__date__gte=since)
    if until:
        records = records.filter(at__date__lte=until)
    return records


# --- subject access (UK GDPR Art. 15): the register's part of safeground.privacy's export ------


def _at(value: date | datetime | None) -> str | None:
    return clock.iso_or_none(value)


def subject_access_open(*, user: Any, person_id: int, reason: str) -> tuple[Person, AccessRecord]:
    """A subject-access export's checks and its access record (with the stated reason), before
    anything about the person is read: the person, and the record."""
    person = Person.objects.filter(pk=person_id).first()
    if person is None:
        raise Http404(_("no such person"))
    require(can_export_subject_access(user, person.organisation_id))
    if person.erased_at is not None:
        said = _("person #%(person)s was erased on %(day)s: nothing identifying is held")
        raise BanError(
            "person", said % {"person": person.pk, "day": f"{person.erased_at:%Y-%m-%d}"}
        )
    record = access_record_write(
        user=user,
        action=Action.SUBJECT_ACCESS,
        organisation=person.organisation_id,
        person=person,
        reason=reason_check(reason),
    )
    return person, record


def subject_access_register(person: Person) -> dict[str, Any]:
    """The person's record on the register and their bans, each with its history."""
    bans = Ban.objects.filter(person=person).prefetch_related("steps").order_by("pk")
    return {
        "person": {
            "id": person.pk,
            "first_names": person.first_names,
            "last_name": person.last_name,
            "date_of_birth": _at(person.date_of_birth),
            "supporter_number": person.supporter_number,
            "has_photo": bool(person.photo),
            "on_register_since": _at(person.created_at),
        },
        "bans": [
            {
                "id": ban.pk,
                "type": ban.type,
                "issued_by": ban.issued_by,
                "scope": ban.scope,
                "ground": ban.ground_id,
                "starts_on": _at(ban.starts_on),
                "ends_on": _at(ban.ends_on),
                "is_life": ban.is_life,
                "status": ban.status,
                "ended_on": _at(ban.ended_on),
                "grounds": ban.grounds,
                "reporting_conditions": ban.reporting_conditions,
                "control_periods": ban.control_periods,
                "steps": [
                    {
                        "action": step.action,
                        "from_status": step.from_status,
                        "to_status": step.to_status,
                        "by": step.by_name,
                        "at": _at(step.at),
                        "reason": step.reason,
                    }
                    for step in ban.steps.all()
                ],
            }
            for ban in bans
        ],
    }


def subject_access_records(person: Person) -> list[dict[str, Any]]:
    """Every access record about the person or their bans, the export's own included."""
    records = AccessRecord.objects.filter(Q(person=person) | Q(ban__person=person))
    return [
        {
            "id": r.pk,
            "at": _at(r.at),
            "by": r.username,
            "action": r.action,
            "ban": r.ban_id,
            "reason": r.reason,
            "detail": r.detail,
        }
        for r in records.order_by("at", "pk")
    ]


BANS_LISTED = 500


@transaction.atomic
def bans_list(*, user: Any, reason: str, status: str = "") -> list[Ban]:
    """The bans on the user's registers (newest first, no names: each with its person's id),
    after a stated reason; the listing is recorded once per register (which bans, why)."""
    orgs = register_organisation_ids(user)
    require(bool(orgs))
    reason = reason_check(reason)
    bans = Ban.objects.filter(organisation__in=orgs)
    if status:
        if status not in Ban.Status.values:
            raise BanError("status", one_of(Ban.Status.values))
        bans = bans.filter(status=status)
    found = list(bans.order_by("-created_at", "-pk")[:BANS_LISTED])
    for org in sorted(orgs):
        shown = [b.pk for b in found if b.organisation_id == org]
        access_record_write(
            user=user,
            action=Action.SEARCH,
            organisation=org,
            reason=reason,
            detail=f"bans listed{f' ({status})' if status else ''}: {len(shown)}"
            + (f" (bans {', '.join(f'#{pk}' for pk in shown)})" if shown else ""),
        )
    return found
