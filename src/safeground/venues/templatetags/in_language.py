"""`{{ row.name|in_language:row.names }}`: a ground's name kept as data (a plan's rows, a report's
figures) in the reader's language, English where the venue file gives no other."""

from collections.abc import Mapping

from django import template

from safeground.languages import in_language as name_in_language

register = template.Library()


@register.filter
def in_language(name: str, names: Mapping[str, str] | None) -> str:
    return name_in_language(name, names)
