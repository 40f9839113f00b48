"""One clock: every time written for people (a page, a PDF, a CSV, a command's output) is the
ground's local time, settings.TIME_ZONE (Europe/London: GMT in winter, BST in summer), and never
UTC formatted by hand. JSON carries ISO 8601 with the local offset: the same instant for a
machine, the same wall-clock time for a person reading it.

Templates get `hhmm` and `local_time` as built-in filters (settings.TEMPLATES): they take a
datetime or the ISO 8601 text a report's figures carry (a signed checkpoint's time, a debrief
note's), so a page never slices a UTC string for its hours and minutes.
"""

from datetime import datetime

from django import template
from django.utils import timezone

register = template.Library()


def local(moment: datetime | str) -> datetime:
    """The moment on the ground's clock; ISO 8601 text (with its offset) is read first."""
    if isinstance(moment, str):
        moment = datetime.fromisoformat(moment)
    return timezone.localtime(moment)


def iso(moment: datetime) -> str:
    """ISO 8601 with the local offset, for JSON and CSV: 2016-10-26T21:50:00+01:00."""
    return local(moment).isoformat()


@register.filter
def hhmm(moment: datetime | str | None) -> str:
    """21:50: a time of the match day, on the ground's clock."""
    return "" if not moment else f"{local(moment):%H:%M}"


@register.filter
def local_time(moment: datetime | str | None) -> str:
    """26/10/2016 21:50:00: a moment with its date, on the ground's clock."""
    return "" if not moment else f"{local(moment):%d/%m/%Y %H:%M:%S}"
