"""Names written in the ground's own data files (the venue file, the risk policy) in the
reader's language: a name is kept in English with its other languages beside it (`names:
{cy: "Eisteddle'r Dwyrain"}`), and every page, report and PDF shows it through `in_language`.

The words of the code itself go through Django's translation catalogue; these cannot, because
each ground writes its own."""

from collections.abc import Callable, Mapping

from django.conf import settings
from django.utils.translation import get_language, override


def other_languages() -> tuple[str, ...]:
    """The codes a file may give names in: the site's languages beside English (`cy`)."""
    return tuple(code for code, _name in settings.LANGUAGES if code.split("-")[0] != "en")


def in_language(name: str, names: Mapping[str, str] | None) -> str:
    """`name` in the reader's language when the file gives it, else the English `name`."""
    if not names:
        return name
    language = (get_language() or "").lower()
    return names.get(language) or names.get(language.split("-")[0]) or name


def in_every_language(render: Callable[[], str]) -> tuple[str, dict[str, str]]:
    """`render()` in English, and in each other language where it differs: a live frame carries
    them all and each screen picks its own (`names[document.documentElement.lang]`), so the
    fan-out sends one frame to every socket whatever its reader's language."""
    with override(settings.LANGUAGE_CODE):
        english = render()
    others = {}
    for code in other_languages():
        with override(code):
            text = render()
        if text != english:
            others[code] = text
    return english, others
