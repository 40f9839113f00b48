"""The register's own retention step (ADR 0004, ADR 0011), run by safeground.privacy first in
the daily job, under the same legal holds as every other step."""

from dataclasses import dataclass
from datetime import date

from django.conf import settings
from django.db.models import Max, Q
from django.utils import timezone

from safeground import clock
from safeground.retention import Holds, cutoff

from .models import ENDED, AccessRecord, Ban, BanStep, Person
from .services import access_record_write


@dataclass(frozen=True)
class PeopleErased:
    people_erased: int
    bans_anonymised: int
    people_kept: int
    people_held: int  # due, but named in an open case (a legal hold)


def people_retention_apply(today: date, holds: Holds, *, days: int | None = None) -> PeopleErased:
    """Erase the people whose every ban ended more than the retention period ago.

    Names, date of birth, supporter number, photo and the free text of their bans and ban steps
    go; the bans stay (type, scope, dates, status, organisation) so the statistics still count.
    Anyone with a ban still in force, proposed or approved, or ended within the period, is kept;
    so is anyone an open case names (a legal hold). Run inside the daily job's transaction."""
    days = settings.SAFEGROUND_BAN_RETENTION_DAYS if days is None else days
    last_day = cutoff(today, days).date()
    live = Q(bans__status__in=set(Ban.Status.values) - ENDED)
    people = Person.objects.filter(erased_at__isnull=True).annotate(last_end=Max("bans__ended_on"))
    due = people.exclude(live).filter(last_end__lte=last_day)
    erased = bans = 0
    now = timezone.now()
    ids = list(due.values_list("pk", flat=True))
    held = sum(1 for pk in ids if pk in holds.people)
    ids = [pk for pk in ids if pk not in holds.people]
    # Locked by id: PostgreSQL allows no FOR UPDATE with the GROUP BY of the query above.
    for person in Person.objects.select_for_update().filter(pk__in=ids, erased_at__isnull=True):
        if person.photo:
            person.photo.delete(save=False)
        Person.objects.filter(pk=person.pk).update(
            first_names="", last_name="", date_of_birth=None, supporter_number="", photo="",
            erased_at=now,
        )  # fmt: skip
        their_bans = Ban.objects.filter(person=person)
        bans += their_bans.update(grounds="", reporting_conditions="", control_periods="")
        BanStep.objects.filter(ban__person=person).erase(reason="(erased by retention)")
        access_record_write(
            user=None, action=AccessRecord.Action.ERASE, organisation=person.organisation_id,
            person=person,
            reason=(
                f"retention: every ban ended on or before {clock.day_iso(last_day)} ({days} days)"
            ),
        )  # fmt: skip
        erased += 1
    kept = Person.objects.filter(erased_at__isnull=True).count()
    return PeopleErased(
        people_erased=erased, bans_anonymised=bans, people_kept=kept, people_held=held
    )
