"""Every live event type, with the shape of its data: the socket's whole vocabulary.

`publish` refuses a type not declared here (always: a dict lookup), and checks the data against
its schema when `SAFEGROUND_CHECK_LIVE_EVENTS` is on (the tests; off in production, so the hot
path does not pay for it). Zulip's `event_schema.py` is the model. A new event type is declared
here, with its schema, and gets a test in tests/live/test_event_types.py.

The schemas describe the frame as it goes over the wire (JSON), so times are ISO 8601 strings.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class _Data(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


# --- the control-room log (published by incidents) ------------------------------------------------

LOG_ENTRY = "log.entry"
LOG_PHOTO = "log.photo"
STEWARD_POST = "steward.post"
BROADCAST = "broadcast"
BROADCAST_ACK = "broadcast.ack"


class LogEntryData(_Data):
    id: int
    seq: int
    kind: str
    concerns: int | None
    observed_at: str
    logged_at: str
    device_offset_s: int | None
    author: str
    author_role: str
    place: str
    place_names: dict[str, str]  # the place in other languages, where its names differ
    block: str
    category: str
    category_name: str
    severity: int | None
    text: str
    note: str
    status: str
    assignee: str
    escalated_to: str
    task: str
    links: list[int]
    hash: str


class IncidentData(_Data):
    id: int
    seq: int
    kind: str
    status: str
    category: str
    category_name: str
    severity: int | None
    text: str
    place: str
    place_names: dict[str, str]
    block: str
    zone_ids: list[int]
    assignee: str
    assignee_username: str
    assignee_id: int | None
    escalated_to: str
    task: str
    links: list[int]
    updated_seq: int
    observed_at: str


class LogEntryEvent(_Data):
    """A new entry in the log, and its incident as it stands after it (seq: the entry's)."""

    entry: LogEntryData
    incident: IncidentData


class LogPhotoEvent(_Data):
    """A photo attached to an entry; `url` serves it to those who may see the entry."""

    entry: int
    seq: int
    photo: int
    sha256: str
    url: str


class StewardPostEvent(_Data):
    steward: str  # username
    name: str
    post: str
    post_names: dict[str, str]  # the post in other languages, where its names differ


class BroadcastEvent(_Data):
    id: int
    script: str
    text: str
    zone: str
    sent_by: str
    sent_at: str
    recipients: list[str]  # usernames
    acknowledged: list[str]


class BroadcastAckEvent(_Data):
    broadcast: int
    user: str  # username
    name: str


# --- the gates (published by entry) ---------------------------------------------------------------

ENTRY_COUNTS = "entry.counts"
ENTRY_DENIED = "entry.denied"
ENTRY_BANNED_ADMITTED = "entry.banned_admitted"
ENTRY_CONFLICT = "entry.conflict"
ENTRY_GATES = "entry.gates"


class TicketSeat(_Data):
    block: str | None
    row: str
    seat: str
    area: str
    end: str


class EntryCountsEvent(_Data):
    """Admitted and denied per gate, stand and zone; the parts are the counts API's own."""

    fixture: int
    at: str
    admitted: int
    capacity: int
    warning_share: float
    gates: list[dict[str, object]]
    stands: list[dict[str, object]]
    zones: list[dict[str, object]]
    denied: dict[str, object]
    prevented: int
    conflicts: dict[str, object]
    warnings: list[str]


class EntryDeniedEvent(_Data):
    """A banned holder turned away (no name, no photo: those stay behind the flag's page)."""

    reason: str
    gate: str
    turnstile: str
    scanned_at: str
    ticket: TicketSeat | None
    flag: int | None
    offline: bool = False  # present, and true, for a scan decided by a scanner offline


class EntryBannedAdmittedEvent(_Data):
    """A scanner offline admitted a holder banned since its bundle was made."""

    gate: str
    turnstile: str
    scanned_at: str
    ticket: TicketSeat | None
    flag: int | None
    offline: bool


class ConflictScan(_Data):
    gate: str
    turnstile: str
    scanned_at: str
    offline: bool


class EntryConflictEvent(_Data):
    """A ticket admitted twice (offline scanners): the seat and both scans."""

    id: int
    raised_at: str
    ticket: TicketSeat
    first: ConflictScan
    second: ConflictScan


class GateWarningData(_Data):
    """A gate warning with its causes' figures (entry.gate_pressure)."""

    kind: str  # jump, capacity, silent
    gate: str
    figures: dict[str, object]
    reasons: list[str]  # jump: the reason codes counted together
    turnstile: str  # silent: the turnstile


class EntryGatesEvent(_Data):
    """Gate pressure: each gate's arrivals against its entry capacity, its queue, its denials by
    reason and its turnstiles' rates; and the gate warnings standing now."""

    fixture: int
    at: str
    gates: list[dict[str, object]]
    warnings: list[GateWarningData]


# --- steward deployment and pre-match checks (published by deployment) ------------------------

STEWARD_CHECKIN = "steward.checkin"
CHECK_RESULT = "check.result"


class StewardCheckInEvent(_Data):
    """A steward checked in at their post (the time is the server's)."""

    steward: str  # username
    name: str
    post: str
    at: str


class CheckResultEvent(_Data):
    """A pre-match check done (pass / fail) or sent back for re-verification, with the match's
    completion after it: `done` of `total` checks passed or failed, `open_critical` not passed."""

    check: int
    item: str
    name: str
    place: str
    critical: bool
    outcome: str  # pass | fail | recheck
    by: str
    at: str
    note: str
    done: int
    total: int
    open_critical: int


# --- the decision log and the radio (published by decisions) -----------------------------------

DECISION = "decision"
RADIO_STATUS = "radio.status"
MAJOR_INCIDENT = "major_incident"


class DecisionEvent(_Data):
    """A decision logged, amended (`amends`: the decision struck through) or reviewed (no text:
    the decision log's pages fetch it again, each reader by the log's rule)."""

    id: int
    seq: int
    action: str  # logged | amended | reviewed
    amends: int | None
    decision_maker: str
    decided_at: str
    review_at: str | None


class RadioStatusEvent(_Data):
    """The control room switched the radio down (fallback instructions in force) or back up."""

    down: bool
    at: str
    by: str
    instructions: str


STAND_CLOSURE = "stand.closure"


class StandClosureEvent(_Data):
    """A commander closed a stand and ordered it evacuated, or reopened it (all clear): logged
    as decision `seq`, its stewards told by broadcast `broadcast` (None: nobody was posted)."""

    stand: str  # its code
    name: str
    closed: bool
    at: str
    by: str
    reason: str
    seq: int
    broadcast: int | None


class MajorIncidentEvent(_Data):
    """A major incident declared, or its M/ETHANE report corrected (`corrects`: the report
    struck through); no parts: the pages fetch the report again."""

    id: int
    seq: int
    action: str  # declared | corrected
    corrects: int | None
    made_by: str
    made_at: str


# --- push alerts to stewards' phones (published by alerts) ----------------------------------------

ALERT_OVERDUE = "alert.overdue"


class AlertOverdueEvent(_Data):
    """An urgent broadcast not acknowledged by everyone in time, raised to the supervisors and
    the control room (SAFEGROUND_ALERT_ACK_SECONDS)."""

    broadcast: int
    text: str
    sent_at: str
    raised_at: str
    unacknowledged: list[str]  # usernames


# --- supporters' reports in the control room's queue (published by supporters) --------------

SUPPORTERS_ITEM = "supporters.item"


class SupportersItemEvent(_Data):
    """A line of the control room's queue of supporters' reports, new, grown or decided (to the
    home club's staff; no reporter's details). `seq`: its log entry once accepted or merged."""

    id: int
    block: str
    category: str
    category_name: str
    count: int
    status: str  # queued | accepted | merged | dismissed
    trust: int
    first_at: str
    last_at: str
    seq: int | None


# --- the socket's own frames (not published: sent by live.websocket, seq null) --------------------

HELLO = "hello"
PONG = "pong"


class ServerTimeFrame(_Data):
    server_time: str


PUBLISHED: dict[str, type[BaseModel]] = {
    LOG_ENTRY: LogEntryEvent,
    LOG_PHOTO: LogPhotoEvent,
    STEWARD_POST: StewardPostEvent,
    BROADCAST: BroadcastEvent,
    BROADCAST_ACK: BroadcastAckEvent,
    ENTRY_COUNTS: EntryCountsEvent,
    ENTRY_DENIED: EntryDeniedEvent,
    ENTRY_BANNED_ADMITTED: EntryBannedAdmittedEvent,
    ENTRY_CONFLICT: EntryConflictEvent,
    ENTRY_GATES: EntryGatesEvent,
    STEWARD_CHECKIN: StewardCheckInEvent,
    CHECK_RESULT: CheckResultEvent,
    DECISION: DecisionEvent,
    RADIO_STATUS: RadioStatusEvent,
    STAND_CLOSURE: StandClosureEvent,
    MAJOR_INCIDENT: MajorIncidentEvent,
    ALERT_OVERDUE: AlertOverdueEvent,
    SUPPORTERS_ITEM: SupportersItemEvent,
}
CONTROL: dict[str, type[BaseModel]] = {HELLO: ServerTimeFrame, PONG: ServerTimeFrame}


class UndeclaredEvent(LookupError):
    """A service published a type the catalogue does not declare: a programming error."""


def schema_of(type: str) -> type[BaseModel]:
    try:
        return PUBLISHED[type]
    except KeyError:
        raise UndeclaredEvent(
            f"live event {type!r} is not declared in safeground.live.catalogue"
        ) from None
