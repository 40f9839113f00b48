"""A subject-access export (UK GDPR Art. 15): everything held about one person, in one file.
Checked and recorded by the register first; then each app's part, in the order listed here."""

from typing import Any

from django.db import transaction
from django.utils import timezone

from safeground import clock
from safeground.bans.selectors import (
    subject_access_open,
    subject_access_records,
    subject_access_register,
)
from safeground.casework.selectors import subject_access_cases
from safeground.entry.selectors import subject_access_tickets

SUBJECT_ACCESS_FORMAT = "safeground-subject-access/1"


@transaction.atomic
def subject_access_export(*, user: Any, person_id: int, reason: str) -> dict[str, Any]:
    """Everything held about one person on the register: the record, their bans and each ban's
    history, their tickets by name and date of birth with the scans, the flags, the cases naming
    them, and every access record about them. Checked and recorded (with the stated reason)
    before anything is read."""
    person, record = subject_access_open(user=user, person_id=person_id, reason=reason)
    export: dict[str, Any] = {
        "format": SUBJECT_ACCESS_FORMAT,
        "exported_at": clock.iso(timezone.now()),
        "exported_by": user.get_username(),
        "reason": record.reason,
        "access_record": record.pk,
        "controller": str(person.organisation),
    }
    export |= subject_access_register(person)  # "person", "bans"
    export |= subject_access_tickets(person)  # "tickets", "ticket_flags"
    export |= subject_access_cases(person)  # "case_subjects"
    export["access_records"] = subject_access_records(person)
    return export
