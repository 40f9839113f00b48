"""Every write to the control-room log. Each is one transaction that appends one entry.

Appends to one match are serialised by locking the fixture row (PostgreSQL) or by SQLite's
IMMEDIATE transactions, so the chain never forks (docs/adr/0003-log-chain.md).
"""

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from safeground.accounts.models import User
from safeground.accounts.permissions import memberships
from safeground.errors import SafegroundError, at_most, one_of, too_long
from safeground.live.catalogue import LOG_ENTRY
from safeground.live.events import publish
from safeground.matches.models import Fixture

from . import hooks, places
from .chain import entry_hash
from .chain_lock import chain_head, log_chain_lock, one_sqlite_writer
from .checkpoints import checkpoint_at_head, checkpoint_due
from .flashpoint import WarningDue, warned_zone_ids, warnings_due, warnings_write
from .flashpoint_watch import Watcher
from .models import DEALT_WITH_STATUSES, Category, LogCheckpoint, LogEntry
from .selectors import (
    INCIDENT_KINDS,
    RECORD_KINDS,
    entry_audience,
    entry_event_data,
    entry_zone_ids,
    incident_fold,
    incident_state,
    zone_map,
)

logger = logging.getLogger(__name__)

MAX_TEXT = 2000
SYSTEM_AUTHOR = "Safeground (automatic)"
Status = LogEntry.Status

# Which status an incident may move to from which (a closed incident takes no more actions).
TRANSITIONS: dict[str, set[str]] = {
    Status.OPEN: {Status.ASSIGNED, Status.ESCALATED, Status.RESOLVED},
    Status.ASSIGNED: {Status.ASSIGNED, Status.ESCALATED, Status.RESOLVED},
    Status.ESCALATED: {Status.ASSIGNED, Status.ESCALATED, Status.RESOLVED},
    Status.RESOLVED: {Status.CLOSED, Status.OPEN},
    Status.CLOSED: set(),
}


class LogEntryError(SafegroundError):
    """Input the log refuses; `field` names what is wrong, for a 4xx a person can act on."""

    code = "log_entry_refused"


class LogEntryNotFound(LogEntryError):
    """What it names is not there (or not one you may see) (404)."""

    status = 404


class LogEntryConflict(LogEntryError):
    """Well formed, but refused by the state of things (409)."""

    status = 409


class LogEntryForbidden(LogEntryError):
    """Not yours to do (403)."""

    status = 403


@dataclass(frozen=True)
class Place:
    """Where something happened, by the ground's codes, as a person or a device gives it."""

    block: str = ""
    first_row: str = ""
    last_row: str = ""
    zone: str = ""
    gate: str = ""
    concourse: str = ""
    outside: str = ""


def _resolve_place(fixture: Fixture, place: Place) -> dict[str, Any]:
    ground = fixture.ground
    first_row, last_row = place.first_row.strip(), place.last_row.strip()
    found: dict[str, Any] = {
        # A last row alone is that one row, as a first row alone is.
        "first_row": first_row or last_row,
        "last_row": last_row,
        "outside": place.outside.strip()[:200],
    }
    for field in places.PLACE_MODELS:
        code = getattr(place, field).strip()
        found[field] = None
        if code:
            found[field] = places.place_at(ground.pk, field, code)
            if found[field] is None:
                raise LogEntryNotFound(
                    field,
                    _("no %(field)s '%(code)s' at %(ground)s")
                    % {"field": field, "code": code, "ground": ground.name},
                )
    if found["block"] is not None and found["first_row"]:
        rows = found["block"].rows
        for field in ("first_row", "last_row"):
            if found[field] and rows and found[field] not in rows:
                raise LogEntryError(
                    field,
                    _("block %(block)s has no row '%(row)s'")
                    % {"block": found["block"].code, "row": found[field]},
                )
    elif found["first_row"] or found["last_row"]:
        raise LogEntryError("first_row", _("rows need a block"))
    if not any(found[f] for f in ("block", "zone", "gate", "concourse", "outside")):
        raise LogEntryError(
            "place", _("give a block, zone, gate, concourse or 'outside' description")
        )
    return found


def _check_observed_at(observed_at: datetime | None, now: datetime) -> datetime:
    if observed_at is None:
        return now
    if timezone.is_naive(observed_at):
        raise LogEntryError("observed_at", _("give a time with its time zone"))
    skew = timedelta(seconds=settings.SAFEGROUND_CLOCK_SKEW_SECONDS)
    if observed_at > now + skew:
        raise LogEntryError("observed_at", _("is in the future; check the device's clock"))
    return observed_at


# An offset within this is the network's transit, not the device's clock: its time stands.
TRANSIT = timedelta(seconds=5)


def _device_times(
    observed_at: datetime | None, sent_at: datetime | None, now: datetime
) -> dict[str, datetime | None]:
    """When a report happened, on the server's clock (ADR 0026). A device that says when it sent
    (`sent_at`, its own clock read at each send) tells how far its clock is off: `now - sent_at`.
    Its observed time is corrected by that offset, and both of its own readings are kept. A
    report held for minutes in an offline outbox keeps its time (observed long before sent, on
    the same clock), a clock ten minutes off is corrected by ten minutes. Without `sent_at` the
    device's time is taken as it is (it cannot be checked), refused only in the future."""
    if sent_at is None:
        return {"observed_at": _check_observed_at(observed_at, now)}
    if timezone.is_naive(sent_at):
        raise LogEntryError("sent_at", _("give a time with its time zone"))
    if observed_at is not None and timezone.is_naive(observed_at):
        raise LogEntryError("observed_at", _("give a time with its time zone"))
    if observed_at is not None and observed_at > sent_at:
        raise LogEntryError(
            "observed_at", _("is after sent_at: both are read from the device's own clock")
        )
    offset = now - sent_at
    if abs(offset) <= TRANSIT:
        offset = timedelta(0)
    try:
        observed = now if observed_at is None else min(observed_at + offset, now)
    except OverflowError:
        raise LogEntryError(
            "sent_at", _("is not a time this device's clock can have read")
        ) from None
    return {"observed_at": observed, "device_observed_at": observed_at, "device_sent_at": sent_at}


def _author_role(author: User, fixture: Fixture) -> str:
    """The role the author works this match in (home club first, then the sharing bodies)."""
    orgs = [fixture.ground.organisation_id, *fixture.shared_organisation_ids()]
    for org in orgs:
        roles = sorted(role for member_org, role in memberships(author) if member_org == org)
        if roles:
            return roles[0]
    return ""


def _append(*, fixture: Fixture, author: User | None, **fields: Any) -> LogEntry:
    """Lock the match's chain, link the new entry to the last one, store it, publish on commit;
    sign a checkpoint of the chain when one is due (checkpoints.checkpoint_due).

    A chained record (a broadcast, a post, a photo: RECORD_KINDS) is only linked and stored:
    it is no incident and goes out live through its own event, to its own audience."""
    key = fields.get("idempotency_key", "")
    last = chain_head(fixture, author, key)  # the chain locked, then its head read
    if last.repeated_id is not None:
        # A key is its author's own: the same author sending it again (a retry, an outbox
        # replayed) gets the stored entry back, another user's report with it is stored as
        # theirs, never answered with someone else's entry.
        found = LogEntry.objects.get(pk=last.repeated_id)
        _same_report(found, fields)
        return found
    record = fields["kind"] in RECORD_KINDS
    zones = None if record else zone_map(fixture)
    concerns = fields.get("concerns")
    # The incident as it stands before this entry, read under the lock: whose task it was.
    before = incident_state(concerns, zones) if concerns is not None else None
    now = timezone.now()
    entry = LogEntry(
        fixture=fixture,
        seq=last.seq + 1,
        prev_hash=last.hash,
        logged_at=now,
        observed_at=fields.pop("observed_at", None) or now,
        author=author,
        author_name=str(author) if author else SYSTEM_AUTHOR,
        author_role=_author_role(author, fixture) if author else "",
        **fields,
    )
    entry.hash = entry_hash(entry.prev_hash, entry)
    entry.insert()
    if checkpoint_due(seq=entry.seq, now=now, previous_logged_at=last.logged_at):
        checkpoint_at_head(fixture, entry, now, LogCheckpoint.Reason.INTERVAL)
    if record:
        return entry
    assert zones is not None
    after = incident_fold(before, entry, zones)
    publish(
        fixture_id=fixture.pk,
        type=LOG_ENTRY,
        seq=entry.seq,
        data=entry_event_data(entry, after),
        audience=entry_audience(entry, before=before, after=after, zones=zones),
    )
    return entry


def log_record_append(*, fixture: Fixture, author: User, kind: str, **fields: Any) -> LogEntry:
    """The chained record of a steward's post, a broadcast or a photo (RECORD_KINDS: posts.py,
    broadcasting.py, photos.py), in their transaction. It is no incident: it goes out live through
    its own event, to its own audience."""
    assert kind in RECORD_KINDS
    return _append(fixture=fixture, author=author, kind=kind, **fields)


def log_checkpoint_make(
    *, fixture: Fixture, reason: str = LogCheckpoint.Reason.ON_REQUEST
) -> LogCheckpoint:
    """Sign the chain's head now (at full time, or on request); the one already signed if the
    log has not grown since. Refused for an empty log: there is nothing to anchor."""
    if reason not in LogCheckpoint.Reason.values:
        raise LogEntryError("reason", one_of(LogCheckpoint.Reason.values))
    with one_sqlite_writer(), transaction.atomic():
        log_chain_lock(fixture)
        head = LogEntry.objects.filter(fixture=fixture).order_by("-seq").first()
        if head is None:
            raise LogEntryConflict(
                "match",
                _("the log of %(match)s is empty: nothing to sign") % {"match": fixture},
            )
        return checkpoint_at_head(fixture, head, timezone.now(), reason)


class IdempotencyConflict(LogEntryError):
    """The author sent this idempotency key before with a different report."""

    code = "idempotency_conflict"
    status = 409


# A retry's times are read again (a retry without an observed time is stamped again, an outbox
# reads the device's clock at each send): not a different report.
RESTAMPED = ("observed_at", "device_observed_at", "device_sent_at", "idempotency_key")


def _same_report(stored: LogEntry, fields: dict[str, Any]) -> None:
    """IdempotencyConflict unless `fields` are the stored entry's (the times aside)."""
    for name, value in fields.items():
        if name not in RESTAMPED and getattr(stored, name) != value:
            raise IdempotencyConflict(
                "idempotency_key",
                _(
                    "already used by you for #%(seq)s with a different %(field)s: send a new key"
                    " for a new report"
                )
                % {"seq": stored.seq, "field": name},
            )


def log_entry_append(
    *,
    fixture: Fixture,
    author: User,
    category: str,
    text: str,
    place: Place,
    severity: int | None = None,
    observed_at: datetime | None = None,
    sent_at: datetime | None = None,
    links: Sequence[int] = (),
    idempotency_key: str = "",
    home_only: bool = False,
) -> LogEntry:
    """A new report: something seen, with its place, category and severity. `observed_at` and
    `sent_at` are the reporting device's own clock when it saw and when it sent (_device_times).

    The report commits (and goes out live) first; the flashpoint check follows on this
    process's flashpoint thread (flashpoint_watch.Watcher), so no request, screen or other report
    waits for the scoring. Should the check fail, the stored report stands and the next report
    scores the zone again. Inside a transaction already begun (a test's, a command's) that thread
    could not see the report yet, so the check runs here, after it."""
    with one_sqlite_writer():
        entry = _report_append(
            fixture=fixture,
            author=author,
            category=category,
            text=text,
            place=place,
            severity=severity,
            observed_at=observed_at,
            sent_at=sent_at,
            links=links,
            idempotency_key=idempotency_key,
            home_only=home_only,
        )
    if not connection.in_atomic_block:
        flashpoint_watcher.report_stored(fixture.pk, entry.pk)
        return entry
    try:
        flashpoint_check(
            fixture=fixture, at=entry.observed_at, zone_ids=entry_zone_ids(entry, zone_map(fixture))
        )
    except Exception:
        logger.exception("flashpoint check after report #%s of fixture %s", entry.seq, fixture.pk)
    return entry


@transaction.atomic
def _report_append(
    *,
    fixture: Fixture,
    author: User,
    category: str,
    text: str,
    place: Place,
    severity: int | None,
    observed_at: datetime | None,
    sent_at: datetime | None,
    links: Sequence[int],
    idempotency_key: str,
    home_only: bool,
) -> LogEntry:
    found = places.category_active(category)
    if found is None:
        raise LogEntryNotFound("category", _("no category '%(code)s'") % {"code": category})
    if severity is None:
        severity = found.default_severity
    if not 1 <= severity <= 5:
        raise LogEntryError("severity", _("must be from 1 (minor) to 5 (critical)"))
    text = text.strip()
    if len(text) > MAX_TEXT:
        raise LogEntryError("text", too_long(len(text), MAX_TEXT))
    if len(idempotency_key) > 80:
        raise LogEntryError("idempotency_key", at_most(80))
    times = _device_times(observed_at, sent_at, timezone.now())
    known = set()
    if links:
        known = set(
            LogEntry.objects.filter(fixture=fixture, seq__in=links)
            .exclude(kind__in=RECORD_KINDS)
            .values_list("seq", flat=True)
        )
    missing = sorted(set(links) - known)
    if missing:
        raise LogEntryNotFound("links", _("no entries %(seqs)s in this match") % {"seqs": missing})
    entry = _append(
        fixture=fixture,
        author=author,
        kind=LogEntry.Kind.REPORT,
        category=found,
        severity=severity,
        text=text,
        **times,
        links=sorted(set(links)),
        idempotency_key=idempotency_key,
        home_only=home_only,
        **_resolve_place(fixture, place),
    )
    return entry


def closed(report: LogEntry) -> str:
    return _("incident #%(seq)s is closed") % {"seq": report.seq}


def _report_of(entry: LogEntry) -> LogEntry:
    report = entry.concerns if entry.concerns_id else entry
    assert report is not None
    if report.kind not in INCIDENT_KINDS:
        raise LogEntryError("entry", _("#%(seq)s is not a report") % {"seq": entry.seq})
    return report


def _move(report: LogEntry, to: str) -> None:
    current = incident_state(report).status
    if to not in TRANSITIONS[current]:
        raise LogEntryConflict(
            "status",
            _("incident #%(seq)s is %(current)s; it cannot become %(to)s")
            % {"seq": report.seq, "current": current, "to": to},
        )


def _action(
    report: LogEntry,
    author: User,
    note: str,
    observed_at: datetime | None = None,
    **fields: Any,
) -> LogEntry:
    note = note.strip()
    if len(note) > MAX_TEXT:
        raise LogEntryError("note", too_long(len(note), MAX_TEXT))
    return _append(
        fixture=report.fixture,
        author=author,
        concerns=report,
        home_only=report.home_only,
        note=note,
        observed_at=_check_observed_at(observed_at, timezone.now()),
        **fields,
    )


@transaction.atomic
def log_entry_assign(
    *,
    entry: LogEntry,
    author: User,
    assignee: User,
    note: str = "",
    observed_at: datetime | None = None,
) -> LogEntry:
    report = _report_of(entry)
    _move(report, Status.ASSIGNED)
    assignment = _action(
        report,
        author,
        note,
        observed_at,
        kind=LogEntry.Kind.ASSIGNMENT,
        status=Status.ASSIGNED,
        assignee=assignee,
    )
    hooks.task_given(assignment)
    return assignment


@transaction.atomic
def log_entry_escalate(
    *,
    entry: LogEntry,
    author: User,
    to: str,
    note: str = "",
    observed_at: datetime | None = None,
) -> LogEntry:
    if to not in LogEntry.Level.values:
        raise LogEntryError("to", one_of(LogEntry.Level.values))
    report = _report_of(entry)
    _move(report, Status.ESCALATED)
    return _action(
        report,
        author,
        note,
        observed_at,
        kind=LogEntry.Kind.ESCALATION,
        status=Status.ESCALATED,
        escalated_to=to,
    )


@transaction.atomic
def log_entry_set_status(
    *,
    entry: LogEntry,
    author: User,
    status: str,
    note: str = "",
    observed_at: datetime | None = None,
) -> LogEntry:
    """Resolve, close or reopen an incident."""
    if status not in {Status.RESOLVED, Status.CLOSED, Status.OPEN}:
        raise LogEntryError("status", one_of([Status.RESOLVED, Status.CLOSED, Status.OPEN]))
    report = _report_of(entry)
    _move(report, status)
    change = _action(report, author, note, observed_at, kind=LogEntry.Kind.STATUS, status=status)
    if status in DEALT_WITH_STATUSES:
        hooks.incident_dealt_with(change)
    return change


@transaction.atomic
def log_entry_correct(
    *,
    entry: LogEntry,
    author: User,
    note: str,
    text: str | None = None,
    category: str | None = None,
    severity: int | None = None,
    place: Place | None = None,
) -> LogEntry:
    """A correction: a new entry carrying the corrected fields; the original stays as it was."""
    report = _report_of(entry)
    if incident_state(report).status == Status.CLOSED:
        raise LogEntryConflict("entry", closed(report))
    if not note.strip():
        raise LogEntryError("note", _("say why the entry is corrected"))
    fields: dict[str, Any] = {}
    if text is not None and text.strip():
        if len(text.strip()) > MAX_TEXT:
            raise LogEntryError("text", too_long(len(text.strip()), MAX_TEXT))
        fields["text"] = text.strip()
    if category is not None:
        found = Category.objects.filter(code=category, is_active=True).first()
        if found is None:
            raise LogEntryNotFound("category", _("no category '%(code)s'") % {"code": category})
        fields["category"] = found
    if severity is not None:
        if not 1 <= severity <= 5:
            raise LogEntryError("severity", _("must be from 1 (minor) to 5 (critical)"))
        fields["severity"] = severity
    if place is not None:
        fields.update(_resolve_place(report.fixture, place))
    if not fields:
        raise LogEntryError(
            "correction", _("correct at least one of text, category, severity, place")
        )
    return _action(report, author, note, kind=LogEntry.Kind.CORRECTION, **fields)


def categories_seed() -> None:
    """Make sure the seeded categories exist (migrations seed them; a reset database may not)."""
    from .categories import SEED

    for position, (code, name, offence, severity) in enumerate(SEED):
        Category.objects.get_or_create(
            code=code,
            defaults={
                "name": name,
                "offence": offence,
                "default_severity": severity,
                "position": position,
            },
        )


@transaction.atomic
def log_entry_task(*, entry: LogEntry, author: User, task: str) -> LogEntry:
    """The assignee's answer to a task: accepted, then done. Only the assignee may give it."""
    if task not in LogEntry.Task.values:
        raise LogEntryError("task", one_of(LogEntry.Task.values))
    report = _report_of(entry)
    state = incident_state(report)
    if state.status == Status.CLOSED:
        raise LogEntryConflict("entry", closed(report))
    assignment = (
        LogEntry.objects.filter(concerns=report, kind=LogEntry.Kind.ASSIGNMENT)
        .order_by("-seq")
        .first()
    )
    if assignment is None or assignment.assignee_id != author.pk:
        raise LogEntryForbidden(
            "entry",
            _("incident #%(seq)s is not assigned to you") % {"seq": report.seq},
        )
    return _action(report, author, "", kind=LogEntry.Kind.TASK, task=task)


def log_entry_warn(
    *,
    fixture: Fixture,
    zone_id: int,
    at: datetime,
    severity: int,
    text: str,
    links: Sequence[int],
    quiet_since: datetime,
) -> LogEntry | None:
    """A flashpoint warning: its own incident in the log, naming the entries that caused it.

    Written by Safeground itself (no author), timed at the report that tipped it; unless the
    zone has had a warning observed after `quiet_since` (another check got there first), which
    is looked at under the chain's lock."""
    with one_sqlite_writer(), transaction.atomic():
        log_chain_lock(fixture)
        if zone_id in warned_zone_ids(fixture, quiet_since, at):
            return None
        warning = _append(
            fixture=fixture,
            author=None,
            kind=LogEntry.Kind.WARNING,
            zone_id=zone_id,
            observed_at=at,
            severity=severity,
            text=text[:MAX_TEXT],
            links=sorted(set(links)),
        )
        hooks.warning_written(warning)
        return warning


def log_entry_gate_warn(
    *, fixture: Fixture, gate_id: int, at: datetime, severity: int, text: str
) -> LogEntry:
    """A gate warning (entry's gate pressure, told once at its onset): its own incident in the
    log, at the gate, written by Safeground itself and heard as a flashpoint warning is
    (hooks.warning_written). No zone of its own: it never holds back a flashpoint warning of the
    zones the gate serves."""
    with one_sqlite_writer(), transaction.atomic():
        warning = _append(
            fixture=fixture,
            author=None,
            kind=LogEntry.Kind.WARNING,
            gate_id=gate_id,
            observed_at=at,
            severity=severity,
            text=text[:MAX_TEXT],
        )
        hooks.warning_written(warning)
        return warning


def flashpoint_warning_write(fixture: Fixture, due: WarningDue) -> LogEntry | None:
    """The writer the flashpoint scoring is handed: it never imports this module."""
    return log_entry_warn(
        fixture=fixture,
        zone_id=due.zone_id,
        at=due.at,
        severity=due.severity,
        text=due.text,
        links=due.links,
        quiet_since=due.quiet_since,
    )


def flashpoint_check(
    *, fixture: Fixture, at: datetime, zone_ids: Iterable[int] | None = None
) -> list[LogEntry]:
    """Score the zones as of `at` (flashpoint.warnings_due) and write the warnings due."""
    due = warnings_due(fixture=fixture, at=at, zone_ids=zone_ids)
    return warnings_write(fixture, due, flashpoint_warning_write)


# This process's flashpoint scoring, writing through the log's own writer. A command that
# appends (a replay) waits for it before it exits: safeground.background's own atexit.
flashpoint_watcher = Watcher(flashpoint_warning_write)
