"""A gate warning into the control-room log (issue 41). Entry and the log are siblings that
never import each other: entry tells of a gate warning's onset (entry.hooks.gate_warned) and
this app, the command decision log, writes it into the log. It is here because a gate warning is
what a commander decides on: holding at the gates, putting the kick-off back (this app's
decisions); and this is the lowest app above both."""

from django.conf import settings
from django.utils import translation
from django.utils.translation import gettext

from safeground.entry.gate_pressure import warning_words
from safeground.entry.models import GateWarned
from safeground.incidents.services import log_entry_gate_warn
from safeground.matches.models import Fixture

# A gate to watch and perhaps hold, not yet trouble in the crowd (a flashpoint's is 4).
GATE_WARNING_SEVERITY = 3


def gate_warning_text(warning: dict[str, object]) -> str:
    """A gate warning's words in the active language, as the log and the phones say it."""
    return gettext("Gate warning: %(words)s") % {"words": warning_words(warning)}


def gate_warning_log(warned: GateWarned) -> None:
    """entry.hooks.gate_warned: the warning that started, as a warning entry in the log, in the
    site's language (the log's), timed at its onset."""
    with translation.override(settings.LANGUAGE_CODE):
        text = gate_warning_text(warned.warning)
    log_entry_gate_warn(
        fixture=Fixture.objects.get(pk=warned.fixture_id),
        gate_id=warned.gate_id,
        at=warned.since,
        severity=GATE_WARNING_SEVERITY,
        text=text,
    )
