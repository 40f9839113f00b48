"""A subject-access export (UK GDPR Art. 15): everything held about one person, in one file.
Checked and recorded by the register first; then each app's part, in the order listed here.
A text-line phone's export is answered here too, for one organisation at a time."""

import re
from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from safeground import clock
from safeground.accounts.models import Organisation
from safeground.accounts.permissions import can_export_subject_access, organisation_ids, require
from safeground.bans.models import AccessRecord
from safeground.bans.selectors import (
    reason_check,
    subject_access_open,
    subject_access_records,
    subject_access_register,
)
from safeground.bans.services import access_record_write
from safeground.casework.selectors import subject_access_cases
from safeground.entry.selectors import subject_access_tickets
from safeground.errors import SafegroundError
from safeground.supporters.selectors import phone_held

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


class SubjectAccessError(SafegroundError):
    """A phone's subject-access request the export refuses; `field` names what is wrong."""

    code = "subject_access_refused"


PHONE = re.compile(r"\+?[0-9]{6,15}")


def phone_export_organisations(user: Any) -> list[Organisation]:
    """The organisations the user answers a phone's subject-access request for."""
    ids = [org for org in organisation_ids(user) if can_export_subject_access(user, org)]
    return list(Organisation.objects.filter(pk__in=ids).order_by("name"))


def phone_export_organisation(user: Any, asked: str) -> Organisation:
    """The organisation a phone's export is for: the one asked for (the user must export for
    it), or the user's one when they export for only one."""
    mine = phone_export_organisations(user)
    require(bool(mine))
    asked = (asked or "").strip()
    if not asked:
        if len(mine) > 1:
            names = ", ".join(f"{o.pk} ({o.name})" for o in mine)
            raise SubjectAccessError(
                "organisation",
                _("you answer for several organisations: name one of %(names)s") % {"names": names},
            )
        return mine[0]
    if not asked.isdigit():
        raise SubjectAccessError("organisation", _("an organisation's number"))
    found = [o for o in mine if o.pk == int(asked)]
    require(bool(found))  # not one the user exports for: 403, as for any other's data
    return found[0]


@transaction.atomic
def phone_subject_access_export(
    *, user: Any, organisation: Organisation, phone: str, reason: str
) -> dict[str, Any]:
    """What the organisation holds about a text-line phone: its reports at the organisation's
    matches, the texts its grounds sent the phone, a message waiting for its place; never another
    club's. Checked and recorded (organisation, user, the phone's last digits, the reason) before
    anything is read. The caller has the organisation from phone_export_organisation."""
    phone = (phone or "").strip()
    if not PHONE.fullmatch(phone):
        raise SubjectAccessError("phone", _("a phone number, digits with an optional leading +"))
    try:
        reason = reason_check(reason)
    except SafegroundError as error:
        raise SubjectAccessError("reason", error.message) from error
    record = access_record_write(
        user=user,
        action=AccessRecord.Action.SUBJECT_ACCESS_PHONE,
        organisation=organisation,
        subject=f"phone ending {phone[-4:]}",
        reason=reason,
    )
    return {
        "format": SUBJECT_ACCESS_FORMAT,
        "exported_at": clock.iso(timezone.now()),
        "exported_by": user.get_username(),
        "reason": record.reason,
        "access_record": record.pk,
        "controller": organisation.name,
    } | phone_held(phone=phone, organisation_id=organisation.pk)
