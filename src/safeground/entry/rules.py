"""Why a turnstile refuses a scan: the reasons, in the order they are checked, each with its code
and what the steward reads. Declared once, here (docs/adr/0005-turnstile-decisions.md).

The first reason that holds is the scan's. Each reason has its words here and nowhere else: the
`message` the steward reads, and the `label` a report or a form names it by (`Scan.Reason`'s
choices are the labels, entry.models). Generated from this table: the order of the decision's
SQL statement and of its ORM path (entry.decision), the ticket states of an offline bundle
(entry.bundle), and the order and messages the scanner page decides with offline (the page's
config, entry.views). tests/entry/test_reasons.py fails when any of them disagrees with it.

A message may hold `{slots}` the answer fills: `{where}` (the gate and time of the earlier
admission; offline, only whether this scanner let the ticket in), `{end}` ("a home" or "an away")
and `{go}` (the gates that serve the ticket's block). The words that fill them, and the place an
admission names, are declared here too: the server's answer (entry.scans) and the scanner page
offline (its config) both say them from here. This module imports nothing of the project:
everything else reads it.

The words are English (the source) and in the catalogue (gettext_noop): the functions below and
the scanner's config say them in the active language (the steward's browser's, or their choice).
A scan's `label` is said in English where it is stored and counted (Scan.Reason's choices).
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from django.utils.translation import gettext, gettext_noop

# A ticket's barcode: 1 to 64 printable ASCII characters, no spaces (the ticket file's, a scan's
# and the API schema's, which states it so a client cannot send what is refused).
BARCODE_PATTERN = r"^[!-~]{1,64}$"

# When a reason is decided: before the ticket is found (no ticket of this match), on the ticket
# (its flags, status and end), or by the admission itself (the conditional UPDATE admitted nothing).
Stage = Literal["no_ticket", "ticket", "admission"]


@dataclass(frozen=True)
class Reason:
    code: str
    stage: Stage
    message: str
    label: str  # what the reason is called where scans are counted (reports, exports, forms)
    bundle_state: bool = False  # an offline bundle carries it as the ticket's state
    offline: bool = True  # a scanner decides it from its bundle (it cannot tell wrong_match)


REASONS: tuple[Reason, ...] = (
    Reason(
        "wrong_match",
        "no_ticket",
        gettext_noop(
            "Do not admit: this ticket is for another match. Send the holder to the ticket office."
        ),
        label=gettext_noop("Ticket for another match"),
        offline=False,
    ),
    Reason(
        "forged",
        "no_ticket",
        gettext_noop(
            "Do not admit: this ticket is forged (it looks genuine but was never issued). Keep"
            " the ticket, and call your supervisor."
        ),
        label=gettext_noop("Forged ticket"),
        offline=False,  # the issuing system's format is the server's; offline it is unknown
    ),
    Reason(
        "unknown_ticket",
        "no_ticket",
        gettext_noop(
            "Do not admit: this ticket is not on this match's list. Send the holder to the ticket"
            " office."
        ),
        label=gettext_noop("Unknown ticket"),
    ),
    Reason(
        "banned",
        "ticket",
        gettext_noop(
            "Do not admit: the holder is banned from this match. Keep them at the turnstile and"
            " call your supervisor."
        ),
        label=gettext_noop("Banned"),
        bundle_state=True,
    ),
    Reason(
        "cancelled",
        "ticket",
        gettext_noop(
            "Do not admit: this ticket has been cancelled. Send the holder to the ticket office."
        ),
        label=gettext_noop("Ticket cancelled"),
        bundle_state=True,
    ),
    Reason(
        "flagged",
        "ticket",
        gettext_noop(
            "Do not admit yet: check identity. The holder's name is close to someone on the"
            " banned list. Ask for photo ID and call your supervisor."
        ),
        label=gettext_noop("Flagged: name close to the banned list"),
        bundle_state=True,
    ),
    Reason(
        "wrong_end",
        "ticket",
        gettext_noop("Do not admit: {end} ticket, and this gate does not serve that end.{go}"),
        label=gettext_noop("Wrong end of the ground"),
    ),
    Reason(
        "already_inside",
        "admission",
        gettext_noop(
            "Do not admit: this ticket was already used{where}. A copied ticket, or someone who"
            " has left: call your supervisor."
        ),
        label=gettext_noop("Already inside"),
    ),
)

# What the steward reads when the turnstile turns.
ADMIT = gettext_noop("Admit: {place}.")
EXIT_REENTRY = gettext_noop("Exit recorded. The ticket may be used to come back in.")
EXIT_NO_REENTRY = gettext_noop(
    "Exit recorded. No re-entry at this match: the ticket will not admit again."
)

# The words that fill a message's slots and the place an admission names.
END_WORDS = {
    "home": gettext_noop("a home"),
    "away": gettext_noop("an away"),
}  # {end}: the ticket's end
GO = gettext_noop(
    " Direct the holder to {gates}."
)  # {go}, when the gates serving the block are known
GATES_JOINED_BY = gettext_noop(" or ")
WHERE = gettext_noop(
    " at {gate}{time}"
)  # {where} online: the earlier admission's gate, and time if known
WHERE_TIME = gettext_noop(" at {time}")
WHERE_UNKNOWN_GATE = gettext_noop("another gate")
WHERE_THIS_SCANNER = gettext_noop(
    " by this scanner"
)  # {where} offline: this scanner let the ticket in
WHERE_BEFORE_BUNDLE = gettext_noop(
    " before the ticket list was made"
)  # offline: the bundle says it is inside
SEAT = gettext_noop(
    "block {block}, row {row}, seat {seat}"
)  # {place} of a seated ticket (else its area)

CODES: tuple[str, ...] = tuple(reason.code for reason in REASONS)
BY_CODE: dict[str, Reason] = {reason.code: reason for reason in REASONS}
SLOT = re.compile(r"\{(\w+)\}")


def codes(stage: Stage, reasons: tuple[Reason, ...] = REASONS) -> tuple[str, ...]:
    """The codes decided at one stage, in order."""
    return tuple(reason.code for reason in reasons if reason.stage == stage)


def first(holds: dict[str, bool]) -> str:
    """The first reason, in the table's order, whose check holds; "" when none does."""
    for code in CODES:
        if holds.get(code):
            return code
    return ""


def label(code: str) -> str:
    """What a reason is called where scans are counted ("Banned", "Already inside")."""
    return BY_CODE[code].label


def message(code: str, **slots: str) -> str:
    """A reason's message with its slots filled (a slot not given is left empty)."""
    return SLOT.sub(lambda found: slots.get(found.group(1), ""), gettext(BY_CODE[code].message))


def admit_words(place: str) -> str:
    return gettext(ADMIT).format(place=place)


def exit_words(reentry: bool) -> str:
    return gettext(EXIT_REENTRY if reentry else EXIT_NO_REENTRY)


def end_words(end: str) -> str:
    """{end}: "an away" for an away ticket, else "a home"."""
    return gettext(END_WORDS["away" if end == "away" else "home"])


def go_words(gates: Sequence[str]) -> str:
    """{go}: where to send the holder; nothing when no gate serves their block."""
    return gettext(GO).format(gates=gettext(GATES_JOINED_BY).join(gates)) if gates else ""


def where_words(gate: str | None, time: str | None) -> str:
    """{where} online: the gate of the earlier admission ("another gate" when it is not known)
    and its time ("HH:MM", when known)."""
    at = gettext(WHERE_TIME).format(time=time) if time else ""
    gate = gettext(WHERE_UNKNOWN_GATE) if gate is None else gate
    return gettext(WHERE).format(gate=gate, time=at)


def seat_place(block: str, row: str, seat: str) -> str:
    return gettext(SEAT).format(block=block, row=row, seat=seat)


def bundle_states(reasons: tuple[Reason, ...] = REASONS) -> tuple[str, ...]:
    """The reasons a bundle carries as a ticket's state, in order (the first that holds wins)."""
    return tuple(reason.code for reason in reasons if reason.bundle_state)


def for_scanner() -> dict[str, Any]:
    """What the scanner page decides with offline: the reasons in order, with their messages,
    and the words that fill their slots (the page has no words of its own); and each reason's
    name, which the page shows above the message. All in the active language."""
    return {
        "reasons": [
            {"code": reason.code, "message": gettext(reason.message)}
            for reason in REASONS
            if reason.offline
        ],
        "labels": {reason.code: gettext(reason.label) for reason in REASONS},
        "admit": gettext(ADMIT),
        "exitReentry": gettext(EXIT_REENTRY),
        "exitNoReentry": gettext(EXIT_NO_REENTRY),
        "end": {end: gettext(words) for end, words in END_WORDS.items()},
        "go": gettext(GO),
        "gatesJoinedBy": gettext(GATES_JOINED_BY),
        "whereThisScanner": gettext(WHERE_THIS_SCANNER),
        "whereBeforeBundle": gettext(WHERE_BEFORE_BUNDLE),
        "seat": gettext(SEAT),
    }
