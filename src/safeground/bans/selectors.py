"""Reads of the register. A read of a person fetches, checks the reader may, and writes the access
record with the stated reason, in one function: no page can show a person without all three.
"""

from dataclasses import dataclass
from datetime import date
from typing import Any

from django.db import transaction
from django.db.models import Count, QuerySet
from django.http import Http404

from safeground.accounts.permissions import (
    access_record_organisation_ids,
    can_read_person,
    register_organisation_ids,
    require,
)

from . import hooks
from .dates import parse_date
from .matching import name_key
from .models import AccessRecord, Ban, Person
from .services import BanError, access_record_write

Action = AccessRecord.Action
MAX_REASON = 500
MIN_REASON = 5


def reason_check(reason: str) -> str:
    reason = (reason or "").strip()
    if len(reason) < MIN_REASON:
        raise BanError("reason", "say why you need this record (a few words at least)")
    if len(reason) > MAX_REASON:
        raise BanError("reason", f"is {len(reason)} characters; at most {MAX_REASON}")
    return reason


def person_summary(user: Any, person_id: int) -> Person:
    """The person, checked, without their details: for the reason form (nothing is shown)."""
    person = Person.objects.filter(pk=person_id).first()
    if person is None:
        raise Http404("no such person")
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
        raise Http404("no such ban")
    require(can_read_person(user, ban.organisation_id))
    return ban


@transaction.atomic
def register_search(*, user: Any, query: str) -> list[Person]:
    """People whose name, supporter number or date of birth (yyyy-mm-dd or dd/mm/yyyy) fits the
    query, in the user's registers. The search itself is recorded (what was looked for)."""
    query = query.strip()[:100]
    orgs = register_organisation_ids(user)
    require(bool(orgs))
    if not query:
        return []
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
    for org in orgs:
        access_record_write(
            user=user,
            action=Action.SEARCH,
            organisation=org,
            reason="register search",
            detail=f"query '{query}': {len(found)} found",
        )
    return found[:100]


def _as_date(text: str) -> date | None:
    if not any(c.isdigit() for c in text) or any(c.isalpha() for c in text):
        return None
    found, _ = parse_date(text, today=date.max)
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
        counts={label: counts.get(value, 0) for value, label in Ban.Status.choices},
    )


def access_records_search(
    *,
    user: Any,
    username: str = "",
    action: str = "",
    person_id: int | None = None,
    since: date | None = None,
    until: date | None = None,
) -> QuerySet[AccessRecord]:
    """The auditor's search of the access records of their organisations (newest first)."""
    orgs = access_record_organisation_ids(user)
    require(bool(orgs))
    records = AccessRecord.objects.filter(organisation__in=orgs).select_related("person", "ban")
    if username:
        records = records.filter(username__iexact=username.strip())
    if action:
        records = records.filter(action=action)
    if person_id:
        records = records.filter(person_id=person_id)
    if since:
        records = records.filter(at__date__gte=since)
    if until:
        records = records.filter(at__date__lte=until)
    return records
