"""The words the control room's script writes (static/safeground/control-room-1.js), in the
loggist's language, as the steward page's come from steward_words.py.

They travel in the page's config. `{name}` marks a slot the script fills. The script writes no
words of its own; what a person typed (an entry's text, a name, a block's code) stays as typed.
"""

from typing import Any

from django.utils.translation import gettext

from .steward_words import report_states, task_states


def control_room_words() -> dict[str, Any]:
    return {
        # An entry that acts on an incident, as the log lists it.
        "assigned": gettext("#{seq} assigned to {assignee} by {author}"),
        "escalated": gettext("#{seq} escalated to {level} by {author}"),
        "statusBy": gettext("#{seq} {status} by {author}"),
        "corrected": gettext("#{seq} corrected by {author}"),
        "taskBy": gettext("#{seq} {task} by {author}"),
        "refused": gettext("refused ({status})"),
        "assignedTo": gettext(" · assigned to {assignee}"),
        # A report whose phone's clock was off, or which the phone sent late (ADR 0026).
        "clockBehind": gettext("phone clock {minutes} min behind"),
        "clockAhead": gettext("phone clock {minutes} min ahead"),
        "sentLate": gettext("sent {minutes} min after it was seen"),
        "escalatedToMeta": gettext(" · escalated to {level}"),
        # An incident's actions.
        "assignTo": gettext("Assign #{seq} to"),
        "assignToChoose": gettext("Assign to…"),
        "assign": gettext("Assign"),
        "escalateTo": gettext("Escalate to {level}"),
        "close": gettext("Close"),
        "reopen": gettext("Reopen"),
        "resolve": gettext("Resolve"),
        "correct": gettext("Correct"),
        "correctedText": gettext("Corrected text for #{seq}"),
        "whyCorrected": gettext("Why is it corrected?"),
        "photoOf": gettext("Photo of #{seq}"),
        "admittedOf": gettext("{admitted} of {capacity}"),
        "acknowledge": gettext("Acknowledge"),
        "acknowledgeWarning": gettext("Acknowledge warning #{seq}"),
        "noPlace": gettext("no place given"),
        "nothingInBlock": gettext("Nothing in a block yet."),
        "noEntriesInBlock": gettext("No entries in this block."),
        "entriesInBlock": gettext("Entries in block {block}"),
        # Broadcasts' acknowledgements.
        "acknowledged": gettext("acknowledged: {names}"),
        "nobodyYet": gettext("nobody yet"),
        "waitingFor": gettext("waiting for: {names}"),
        "everyoneAcknowledged": gettext("everyone has acknowledged"),
        # The turnstiles.
        "denied": gettext("Denied: {reasons}"),
        "scanAt": gettext("{time} {gate}, turnstile {turnstile}"),
        "offline": gettext(" (offline)"),
        "seat": gettext("{block}, row {row}, seat {seat}"),
        "row": gettext("row {row}"),
        "seatNumber": gettext("seat {seat}"),
        "ticketFor": gettext("Ticket for {seat}"),
        "firstScan": gettext("first: {scan}"),
        "againScan": gettext("again: {scan}"),
        "ticketForInLine": gettext(" — ticket for {seat}"),
        "flag": gettext(" (flag)"),
        "bannedAdmitted": gettext("Banned holder admitted offline"),
        # Gate pressure (entry.gates): the gate warnings, each with its causes and figures.
        "gateJump": gettext(
            "{gate}: {reasons}, {count} in the last {seconds} s ({perMinute} a minute against"
            " the gate's {before} a minute over the {minutes} minutes before)"
        ),
        "gateCapacity": gettext(
            "{gate}: {arrivals} arriving a minute against an entry capacity of {capacity} a"
            " minute ({turnstiles} turnstiles) for {minutes} minutes"
        ),
        "gateSilent": gettext(
            "{gate}: turnstile {turnstile} has scanned nothing for {seconds} s while the gate's"
            " other {busy} turnstiles scan {others} a minute each"
        ),
        "reasonsJoinedBy": gettext(" or "),
        "queue": gettext("{queue} ({minutes} min)"),
        "turnstileRate": gettext("{code} {rate}/min"),
        "turnstileSilent": gettext("{code} silent"),
        # The live connection and the log's signature.
        "connected": gettext("connected · {ago}"),
        "reconnecting": gettext("reconnecting… {ago}"),
        "noUpdates": gettext("no updates yet"),
        "lastUpdate": gettext("last update {seconds} s ago"),
        "lastUpdateAgo": gettext("(last update {seconds} s ago)"),
        "signedAt": gettext("Signed at entry #{entries}: {head}…"),
        # An incident's state and a task's, named as the steward page names them.
        "states": report_states(),
        "tasks": task_states(),
    }
