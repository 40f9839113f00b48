"""Dates as people type them: a ticket export's dates of birth, a register search."""

import re
from datetime import date

ISO_DATE = re.compile(r"^(\d{4})-(\d{1,2})-(\d{1,2})$")
UK_DATE = re.compile(r"^(\d{1,2})[/.-](\d{1,2})[/.-](\d{2,4})$")


def parse_date(text: str, *, today: date) -> tuple[date | None, str]:
    """(the date, "") or (None, what is wrong). ISO (yyyy-mm-dd) or UK (dd/mm/yyyy)."""
    text = text.strip()
    if not text:
        return None, "is missing"
    iso = ISO_DATE.match(text)
    uk = UK_DATE.match(text)
    if iso:
        year, month, day = (int(part) for part in iso.groups())
    elif uk:
        day, month, year = (int(part) for part in uk.groups())
        if len(uk.group(3)) != 4:
            return None, f"'{text}' has a two-digit year; give all four digits (dd/mm/yyyy)"
    else:
        return None, f"'{text}' is not a date (use yyyy-mm-dd or dd/mm/yyyy)"
    try:
        found = date(year, month, day)
    except ValueError:
        return None, f"'{text}' is not a real date"
    if found > today:
        return None, f"'{text}' is in the future"
    if found.year < 1900:
        return None, f"'{text}' is before 1900"
    return found, ""
