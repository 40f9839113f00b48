"""One clock: every time written for people (a page, a PDF, a CSV, a command's output) is the
ground's local time, settings.TIME_ZONE (Europe/London: GMT in winter, BST in summer), and never
UTC formatted by hand. JSON carries ISO 8601 with the local offset: the same instant for a
machine, the same wall-clock time for a person reading it.

One formatter per kind of figure, built-in template filters (settings.TEMPLATES), so no page
chooses its own way of writing a date or a number:
- `local_time`: a moment with its date, 26/10/2016 21:50 (`local_time:"seconds"` where seconds
  matter: CCTV footage, the case's history);
- `local_date`: a day, 26/10/2016;
- `hhmm`: a time of the match day, 21:50;
- `count`: a whole number with thousands separators, 15,900;
- `rate`: people an hour, "660 an hour".
The time filters take a datetime or the ISO 8601 text a report's figures carry (a signed
checkpoint's time, a debrief note's), so a page never slices a UTC string for its hours.
"""

from datetime import UTC, date, datetime

from django import template
from django.utils import timezone
from django.utils.formats import number_format
from django.utils.translation import gettext

register = template.Library()


def local(moment: datetime | str) -> datetime:
    """The moment on the ground's clock; ISO 8601 text (with its offset) is read first."""
    if isinstance(moment, str):
        moment = datetime.fromisoformat(moment)
    return timezone.localtime(moment)


def stored_time(value: datetime | str) -> datetime:
    """A time read back by plain SQL, aware: SQLite answers text or a naive time (by the column's
    declared type), in UTC as Django writes it; PostgreSQL an aware time already."""
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def iso(moment: datetime, timespec: str = "auto") -> str:
    """ISO 8601 with the local offset, for JSON and CSV: 2016-10-26T21:50:00+01:00. Every time
    leaves through here, `day_iso` or `utc_iso` (tests/test_one_clock.py finds any other
    `.isoformat()` under src/)."""
    return local(moment).isoformat(timespec=timespec)


def day_iso(day: date | datetime) -> str:
    """A day as ISO 8601, 2016-10-26 (a moment's day on the ground's clock)."""
    if isinstance(day, datetime):
        day = local(day).date()
    return day.isoformat()


def iso_or_none(value: date | datetime | None) -> str | None:
    """A moment (`iso`) or a day (`day_iso`) that may be missing, as a subject-access export
    writes it."""
    if value is None:
        return None
    return iso(value) if isinstance(value, datetime) else day_iso(value)


def utc_iso(moment: datetime, timespec: str = "auto") -> str:
    """ISO 8601 in UTC, 2016-10-26T20:50:00+00:00: only in what is signed or hashed and checked
    again later (the log's chain and checkpoints, a decision's parts, case and offline bundles,
    backups' manifests). Their text is what was signed: never change how this writes it, or
    every record already signed fails its check."""
    return moment.astimezone(UTC).isoformat(timespec=timespec)


@register.filter
def hhmm(moment: datetime | str | None, precision: str = "") -> str:
    """21:50: a time of the match day, on the ground's clock (21:50:07 with "seconds")."""
    if not moment:
        return ""
    return f"{local(moment):%H:%M:%S}" if precision == "seconds" else f"{local(moment):%H:%M}"


@register.filter
def local_time(moment: datetime | str | None, precision: str = "") -> str:
    """26/10/2016 21:50: a moment with its date, on the ground's clock (21:50:00 with
    "seconds")."""
    if not moment:
        return ""
    return f"{local_date(moment)} {hhmm(moment, precision)}"


@register.filter
def local_date(day: date | datetime | str | None) -> str:
    """26/10/2016: a day (a moment's day on the ground's clock)."""
    if not day:
        return ""
    if isinstance(day, str):
        day = date.fromisoformat(day) if len(day) == 10 else local(day)
    if isinstance(day, datetime):
        day = local(day)
    return f"{day:%d/%m/%Y}"


@register.filter
def count(n: float | None) -> str:
    """15,900: a whole number with the thousands separated (the figure rounded down is the
    caller's business; this only writes it)."""
    if n is None:
        return ""
    return number_format(round(n), force_grouping=True)


@register.filter
def rate(per_hour: float | None) -> str:
    """660 an hour: people through a gate (or any flow) per hour, with its separators."""
    if per_hour is None:
        return ""
    return gettext("%(n)s an hour") % {"n": count(per_hour)}
