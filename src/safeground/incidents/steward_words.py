"""The words the steward's phone page writes from its script (static/safeground/steward-1.js and
outbox-1.js), in the steward's language.

They travel in the page's config, so a page kept by the service worker has them with no network.
`{name}` marks a slot the script fills. The script writes no words of its own.
"""

from collections.abc import Iterable
from typing import Any

from django.utils.translation import gettext, gettext_noop, pgettext

from .models import Broadcast, Category

# A broadcast sent without words of its own carries its script's name in the sender's language
# (Broadcast.Script's labels, English): the steward reads it in theirs. Named here for the
# catalogue; tests/incidents/test_steward_words.py checks they are the model's labels.
SCRIPT_NAMES = (
    gettext_noop("Hold at the gates"),
    gettext_noop("Evacuate block"),
    gettext_noop("Lockdown"),
    gettext_noop("All clear"),
    gettext_noop("Message"),
)


def steward_words(categories: Iterable[Category]) -> dict[str, Any]:
    """`categories`: those the page offers; the log's frames name them in English (their names),
    the page in the steward's language (a seeded name's translation, any other as it is)."""
    return {
        "categories": {category.name: gettext(category.name) for category in categories},
        "queued": gettext("queued ({count})"),
        "photoWaiting": gettext("logged as #{seq}, photo waiting"),
        "waiting": gettext("waiting to send"),
        "loggedAs": gettext("logged as #{seq}"),
        "seen": gettext("Seen"),
        "seenLabel": gettext("Seen: {label}"),
        "block": gettext("Block {block}"),
        "pickWhat": gettext("Pick what you saw first."),
        "pickWhere": gettext("Pick where it is."),
        "saved": gettext("Saved. It goes to the control room as soon as there is a network."),
        "sent": gettext("Sent to the control room."),
        "refused": gettext("Refused: see below."),
        "states": report_states(),
        "tasks": task_states(),
        "accept": gettext("Accept"),
        "done": pgettext("task button", "Done"),
        "noNetworkTask": gettext("No network: try again in a moment."),
        "noNetworkAck": gettext(
            "No network: the control room has not got your acknowledgement. Try again."
        ),
        "lastUpdate": gettext("last update {seconds} s ago"),
        "noUpdates": gettext("no updates yet"),
        "loggedOut": gettext("logged out: log in again to send reports"),
        "connected": gettext("connected · {ago}"),
        "queuedCount": gettext(" · {count} queued"),
        "offline": gettext("offline · {count} queued"),
        "loggedOutQueued": gettext("logged out: log in again to send the queued reports"),
        "notAllowed": gettext("not allowed: your role may not log this for this match"),
        "refusedHttp": gettext("refused (HTTP {status})"),
        "photoRefused": gettext("report stored as #{seq}, but its photo was refused: {reason}"),
        "scripts": {
            script.value: {"source": script.label, "said": gettext(script.label)}
            for script in Broadcast.Script
        },
    }


def report_states() -> dict[str, str]:
    """An incident's states as the steward page and the control room name them."""
    return {
        "received": pgettext("report state", "received"),
        "open": pgettext("report state", "open"),
        "assigned": pgettext("report state", "assigned"),
        "escalated": pgettext("report state", "escalated"),
        "resolved": pgettext("report state", "resolved"),
        "closed": pgettext("report state", "closed"),
    }


def task_states() -> dict[str, str]:
    """A steward's task's states, by the same words everywhere."""
    return {
        "new": pgettext("task state", "new"),
        "accepted": pgettext("task state", "accepted"),
        "done": pgettext("task state", "done"),
    }
