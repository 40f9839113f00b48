"""Dates as people type them: a ticket export's dates of birth, a register search."""

import re
from datetime import date

from django.utils.translation import gettext as _

ISO_DATE = re.compile(r"^(\d{4})-(\d{1,2})-(\d{1,2})$")
UK_DATE = re.compile(r"^(\d{1,2})[/.-](\d{1,2})[/.-](\d{2,4})$")


def parse_date(text: str, *, today: date) -> tuple[date | None, str]:
    """(the date, "") or (None, what is wrong). ISO (yyyy-mm-dd) or UK (dd/mm/yyyy)."""
    text = text.strip()
    if not text:
        return None, _("is missing")
    iso = ISO_DATE.match(text)
    uk = UK_DATE.match(text)
    if iso:
        year, month, day = (int(part) for part in iso.groups())
    elif uk:
        day, month, year = (int(part) for part in uk.groups())
        if len(uk.group(3)) != 4:
            return None, _("'%(text)s' has a two-digit year; give all four digits (dd/mm/yyyy)") % {
                "text": text
            }
    else:
        return None, _("'%(text)s' is not a date (use yyyy-mm-dd or dd/mm/yyyy)") % {"text": text}
    try:
        found = date(year, month, day)
    except ValueError:
        return None, _("'%(text)s' is not a real date") % {"text": text}
    if found > today:
        return None, _("'%(text)s' is in the future") % {"text": text}
    if found.year < 1900:
        return None, _("'%(text)s' is before 1900") % {"text": text}
    return found, ""
