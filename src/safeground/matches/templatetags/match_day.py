"""A match named with its day: the same two clubs meet more than once (a cup replay, the demo's
rerun of its 2016 tie), and a heading or a browser tab must tell the two apart (issue 38)."""

from django import template
from django.utils import timezone
from django.utils.translation import gettext

from safeground.clock import local, local_date
from safeground.matches.models import Fixture

register = template.Library()


@register.filter
def match_day(fixture: Fixture) -> str:
    """ "today", or the day of the kick-off on the ground's clock: 26/10/2016; with a kick-off
    delay decided, the new kick-off too: "today, kick-off put back 15 min to 20:00"."""
    day = gettext("today") if local(fixture.kickoff).date() == timezone.localdate() else None
    day = day or local_date(fixture.kickoff)
    if not fixture.kickoff_delay:
        return day
    return gettext("%(day)s, kick-off put back %(minutes)s min to %(time)s") % {
        "day": day,
        "minutes": fixture.kickoff_delay,
        "time": f"{local(fixture.kickoff_now):%H:%M}",
    }


@register.filter
def dated(fixture: Fixture) -> str:
    """West Ham v Chelsea (today); West Ham v Chelsea (26/10/2016)."""
    return f"{fixture} ({match_day(fixture)})"
