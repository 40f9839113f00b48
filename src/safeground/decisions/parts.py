"""A decision's parts (the JESIP joint decision log, the National Decision Model's parts), declared
once, here: each part's key, the one label people read it by, a line of help, and whether a
decision needs it (docs/adr/0014-decision-log.md).

Driven from this table: the model's fields' names (decisions.models), the form's fields
(decisions.forms), the API's schema (decisions.api: its fields and their descriptions), the page,
its PDF and the post-match report's part (decisions/log_body.html, through
`DecisionRow.parts_said`), the JSON a case bundle carries (decisions.selectors.decision_json)
and the canonical form whose SHA-256 the log's entry carries (decisions.services.decision_fields).
tests/decisions/test_parts.py fails when any of them disagrees with it.

The keys are in the hashed canonical form of every decision already logged: a key is never
renamed nor removed (a new part is added at the end, and its absence hashed as before). A major
incident's M/ETHANE report has its table here too (METHANE_PARTS: the model's fields, the form,
the page, the alert). This module imports nothing of the project: everything else reads it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.utils.translation import gettext_lazy as _
from django.utils.translation import override

if TYPE_CHECKING:  # the stubs' name for a lazy string; not installed where the ground runs
    from django_stubs_ext import StrPromise


@dataclass(frozen=True)
class Part:
    key: str
    label: StrPromise  # what the form, the page, the PDF and the report call it
    help: StrPromise | str = ""  # a line under the form's field; the API field's description
    required: bool = False


PARTS: tuple[Part, ...] = (
    Part("decision", _("Decision"), required=True),
    Part("rationale", _("Rationale"), required=True),
    Part("information", _("Information and intelligence"), _("what it rests on")),
    Part("threat_assessment", _("Threat and risk assessment")),
    Part("powers_policy", _("Powers, policy or procedure"), _("the ones used")),
    Part("options_considered", _("Options considered")),
    Part("options_rejected", _("Options rejected, and why"), _("each rejected option, and why")),
)

KEYS: tuple[str, ...] = tuple(part.key for part in PARTS)
REQUIRED: tuple[str, ...] = tuple(part.key for part in PARTS if part.required)


def part(key: str) -> Part:
    (found,) = [p for p in PARTS if p.key == key]
    return found


def english(words: StrPromise | str) -> str:
    """The words in English, the source (the API's schema is written in English whatever the
    asker's language)."""
    with override(None):
        return str(words)


# --- an M/ETHANE report (JESIP's first message of a major incident) -----------------------------


@dataclass(frozen=True)
class MethanePart:
    key: str
    letter: str  # its letter in M/ETHANE
    label: StrPromise
    help: StrPromise
    required: bool = False


# In M, E, T, H, A, N, E order. Each short: a line on a tablet, filled fast, "unknown" an
# answer; the three a declaration cannot go without are required, the rest come as known.
METHANE_PARTS: tuple[MethanePart, ...] = (
    MethanePart(
        "major_incident", "M", _("Major incident declared"), _("yes, declared; or standby"), True
    ),
    MethanePart(
        "exact_location", "E", _("Exact location"), _("stand, gate or block, and where"), True
    ),
    MethanePart(
        "incident_type", "T", _("Type of incident"), _("crush, fire, structure, disorder…"), True
    ),
    MethanePart("hazards", "H", _("Hazards"), _("present and suspected")),
    MethanePart("access", "A", _("Access"), _("routes in and out; the rendezvous point")),
    MethanePart(
        "casualties", "N", _("Number of casualties"), _("a number, or unknown; how badly hurt")
    ),
    MethanePart("emergency_services", "E", _("Emergency services"), _("present, and required")),
)
METHANE_KEYS: tuple[str, ...] = tuple(p.key for p in METHANE_PARTS)
METHANE_MAX = 200  # characters: a line on a tablet
