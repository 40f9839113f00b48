"""`{{ entry|place }}`: where a log entry happened, as every page names it (a block and its rows,
a zone, a gate, a concourse or outside the ground): one wording, from incidents.selectors."""

from django import template

from safeground.incidents.models import LogEntry
from safeground.incidents.selectors import place_label

register = template.Library()


@register.filter
def place(entry: LogEntry) -> str:
    return place_label(entry)
