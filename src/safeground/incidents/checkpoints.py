"""Signed checkpoints of a match's log: the chain's head anchored outside the database.

A checkpoint is a statement {fixture, entries, head, at, reason, key id}, signed with the
server's Ed25519 key (safeground/signing.py, the key of the scanners' bundles). It is stored
append-only in the database, written as a file through the checkpoint storage (a folder by
default), and downloaded by the organisations the match is shared with, who keep their copy. A log
whose newest entries were removed, whose chain was recomputed after an edit, or whose table was
emptied then no longer agrees with the checkpoints (verify.verify_against), though its own
chain still does (docs/adr/0008-anchored-log.md).

The file a checkpoint is written as, and what the download and the case bundle carry:

    {"format": "safeground-log-checkpoint",
     "statement": {"version": 1, "fixture": 12, "entries": 50, "head": "<sha-256 hex>",
                   "at": "2016-10-26T19:45:00.000000+00:00", "reason": "interval",
                   "key_id": "<16 hex>"},
     "signature": "<base64url Ed25519 over canonical_json(statement)>",
     "public_key": "<base64url of the raw 32-byte public key>"}

canonical_json is JSON with sorted keys, no spaces and ASCII only, so any reader rebuilds the
signed bytes from the parsed statement.
"""

import json
import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cache
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import Storage, storages
from django.db import transaction
from django.db.models import Exists, F, OuterRef, Subquery
from django.db.models.functions import Coalesce

from safeground import clock, signing
from safeground.errors import SafegroundError
from safeground.matches.models import FULL_TIME_MINUTES, Fixture

from .models import LogCheckpoint, LogEntry

logger = logging.getLogger(__name__)

FORMAT = "safeground-log-checkpoint"
LIST_FORMAT = "safeground-log-checkpoints"
VERSION = 1


class CheckpointFileError(SafegroundError):
    """A checkpoint file that cannot be read as one (not JSON, not the format, fields missing)."""

    code = "checkpoint_file_refused"


@dataclass(frozen=True)
class Checkpoint:
    """A checkpoint as read back, from the database or from a file held outside it."""

    statement: dict[str, Any]
    signature: str
    source: str  # "database", or the file it was read from

    @property
    def fixture_id(self) -> int:
        return int(self.statement["fixture"])

    @property
    def entries(self) -> int:
        return int(self.statement["entries"])

    @property
    def head(self) -> str:
        return str(self.statement["head"])

    @property
    def at(self) -> str:
        return str(self.statement["at"])

    @property
    def key_id(self) -> str:
        return str(self.statement["key_id"])

    def signed_bytes(self) -> bytes:
        return signing.canonical_json(self.statement)

    def same_as(self, other: "Checkpoint") -> bool:
        return self.statement == other.statement and self.signature == other.signature

    def to_json(self) -> dict[str, Any]:
        held = {"format": FORMAT, "statement": self.statement, "signature": self.signature}
        server = signing.public_key_json()
        if server["key_id"] == self.key_id:  # after a key change, the old key is not ours to give
            held["public_key"] = server["public_key"]
        return held


def _time(value: datetime) -> str:
    return clock.utc_iso(value, "microseconds")


def checkpoint_due(*, seq: int, now: datetime, previous_logged_at: datetime | None) -> bool:
    """Whether the append of entry `seq` at `now` makes a checkpoint: every EVERY_ENTRIES-th
    entry, and (if set; off by default, heads_due bounds the time instead) the first entry of each
    EVERY_MINUTES of the clock. Decided from what the append already holds (its seq, the previous
    entry's time), so an append that is not due costs no query more
    (tests/incidents/timing_log_append.py)."""
    every = settings.SAFEGROUND_CHECKPOINT_EVERY_ENTRIES
    if every > 0 and seq % every == 0:
        return True
    minutes = settings.SAFEGROUND_CHECKPOINT_EVERY_MINUTES
    if minutes <= 0 or previous_logged_at is None:
        return False
    span = minutes * 60
    return int(now.timestamp() // span) != int(previous_logged_at.timestamp() // span)


ANCHOR_TASK = "safeground.incidents.tasks.log_heads_anchor_task"


def full_time_at(kickoff: datetime) -> datetime:
    """When a match counts as over for its log: the scheduled full time plus a margin for
    stoppage time (SAFEGROUND_CHECKPOINT_FULL_TIME_MARGIN_MINUTES). The anchoring job signs the
    head then, unless someone signed full time already; verify-log wants the log anchored after."""
    margin = timedelta(minutes=settings.SAFEGROUND_CHECKPOINT_FULL_TIME_MARGIN_MINUTES)
    return kickoff + timedelta(minutes=FULL_TIME_MINUTES) + margin


def anchor_job_every() -> timedelta:
    """How often the anchoring job runs (SAFEGROUND_PERIODIC_TASKS; a minute if cron runs it)."""
    return timedelta(seconds=float(settings.SAFEGROUND_PERIODIC_TASKS.get(ANCHOR_TASK, 60)))


@dataclass(frozen=True)
class HeadDue:
    fixture_id: int
    reason: str
    head: int  # the newest entry when looked at
    signed: int  # the most entries signed so far (0: none)


def heads_due(*, now: datetime) -> list[HeadDue]:
    """The logs whose head the anchoring job must sign now, in one query.

    A log is due when entries after its last checkpoint exist and either the oldest of them is
    about to be WITHIN_MINUTES old (the job runs every minute, so it signs one run early and no
    entry waits longer), or its match is over (full_time_at) and nobody has signed full time:
    then it is signed at once, as full time. A head already signed is never due, so a log that
    stopped growing costs nothing more; a finished match whose head was signed during the match
    gets no second checkpoint of the same entries (their count is unique per match)."""
    signed = (
        LogCheckpoint.objects.filter(fixture=OuterRef("pk")).order_by("-entries").values("entries")
    )
    newest = LogEntry.objects.filter(fixture=OuterRef("pk")).order_by("-seq").values("seq")
    rows = (
        Fixture.objects.annotate(
            signed=Coalesce(Subquery(signed[:1]), 0), head=Subquery(newest[:1])
        )
        .filter(head__gt=F("signed"))
        .annotate(
            first_unsigned_at=Subquery(
                LogEntry.objects.filter(fixture=OuterRef("pk"), seq=OuterRef("signed") + 1).values(
                    "logged_at"
                )[:1]
            ),
            full_time_signed=Exists(
                LogCheckpoint.objects.filter(
                    fixture=OuterRef("pk"), reason=LogCheckpoint.Reason.FULL_TIME
                )
            ),
        )
        .values_list("pk", "kickoff", "head", "signed", "first_unsigned_at", "full_time_signed")
        .order_by("pk")
    )
    within = timedelta(minutes=settings.SAFEGROUND_CHECKPOINT_WITHIN_MINUTES)
    oldest_allowed = now - max(within - anchor_job_every(), timedelta(0))
    due = []
    for fixture_id, kickoff, head, done, first_unsigned_at, full_time_signed in rows:
        if now >= full_time_at(kickoff) and not full_time_signed:
            due.append(HeadDue(fixture_id, LogCheckpoint.Reason.FULL_TIME, head, done))
        elif first_unsigned_at is None or first_unsigned_at <= oldest_allowed:
            # (None: the entry after the last checkpoint is gone, a gap verify-log names; the
            # head is signed all the same, so what follows is anchored.)
            due.append(HeadDue(fixture_id, LogCheckpoint.Reason.INTERVAL, head, done))
    return due


def checkpoint_store(
    *, fixture_id: int, entries: int, head: str, at: datetime, reason: str
) -> LogCheckpoint:
    """Sign and keep a checkpoint of the chain as it stands, and write its file once the
    transaction commits. Called with the match's chain locked (services), so `entries` and
    `head` are the chain's last entry."""
    statement = {
        "version": VERSION,
        "fixture": fixture_id,
        "entries": entries,
        "head": head,
        "at": _time(at),
        "reason": reason,
        "key_id": signing.public_key_json()["key_id"],
    }
    data = signing.canonical_json(statement)
    signature, key_id = signing.sign(data)
    checkpoint = LogCheckpoint.objects.create(
        fixture_id=fixture_id,
        entries=entries,
        head=head,
        made_at=at,
        reason=reason,
        key_id=key_id,
        statement=data.decode(),
        signature=signing.b64url(signature),
    )
    # A file that fails to write must not undo the entry or the checkpoint: logged, and the
    # download and `safeground checkpoint` still give it.
    transaction.on_commit(lambda: checkpoint_file_write(checkpoint), robust=True)
    return checkpoint


def checkpoint_at_head(
    fixture: Fixture, head: LogEntry, now: datetime, reason: str
) -> LogCheckpoint:
    """A checkpoint of the chain ending at `head` (the chain locked). One already signed at that
    length is kept as it is: after newest entries were removed, appends go on and verify-log names
    the loss, rather than every append failing on the checkpoint's unique length."""
    existing = LogCheckpoint.objects.filter(fixture=fixture, entries=head.seq).first()
    if existing is not None:
        if existing.head != head.hash:
            logger.error(
                "fixture %s: a checkpoint of #%s already signed another head; run verify-log",
                fixture.pk,
                head.seq,
            )
        return existing
    return checkpoint_store(
        fixture_id=fixture.pk, entries=head.seq, head=head.hash, at=now, reason=reason
    )


@cache
def _storage_for(backend: str, options: str) -> Storage:
    return storages.create_storage({"BACKEND": backend, "OPTIONS": json.loads(options)})


def checkpoint_storage() -> Storage:
    """The storage checkpoint files go to (SAFEGROUND_CHECKPOINT_STORAGE)."""
    config = settings.SAFEGROUND_CHECKPOINT_STORAGE
    return _storage_for(
        str(config["BACKEND"]), json.dumps(config.get("OPTIONS", {}), sort_keys=True)
    )


def checkpoint_file_name(checkpoint: LogCheckpoint) -> str:
    return f"fixture-{checkpoint.fixture_id}/checkpoint-{checkpoint.entries:06d}.json"


def checkpoint_file_write(checkpoint: LogCheckpoint) -> str:
    """Write the checkpoint's file, unless the storage holds it already, byte for byte. A
    different file of that name is never overwritten (the storage picks another name), so a copy
    once written stays as it was."""
    body = (
        json.dumps(checkpoint_read(checkpoint).to_json(), indent=2, sort_keys=True) + "\n"
    ).encode()
    storage, name = checkpoint_storage(), checkpoint_file_name(checkpoint)
    if storage.exists(name):
        with storage.open(name, "rb") as held:
            if held.read() == body:
                return name
    return storage.save(name, ContentFile(body))


def checkpoint_read(checkpoint: LogCheckpoint) -> Checkpoint:
    return Checkpoint(
        statement=json.loads(checkpoint.statement),
        signature=checkpoint.signature,
        source="database",
    )


def stored_checkpoints(fixture_id: int) -> list[Checkpoint]:
    """The match's checkpoints kept in the database, oldest first."""
    return [
        checkpoint_read(checkpoint)
        for checkpoint in LogCheckpoint.objects.filter(fixture_id=fixture_id).order_by("entries")
    ]


def checkpoints_for(fixture: Any) -> list[dict[str, Any]]:
    """The match's signed checkpoints as JSON, oldest first: what a sharing organisation downloads
    and a case bundle carries (verify-log --checkpoints reads them back)."""
    return [checkpoint.to_json() for checkpoint in stored_checkpoints(fixture.pk)]


def checkpoints_document(fixture: Any) -> dict[str, Any]:
    """Every checkpoint of a match in one file (the download of them all)."""
    return {"format": LIST_FORMAT, "fixture": fixture.pk, "checkpoints": checkpoints_for(fixture)}


def _parse(data: Any, source: str) -> list[Checkpoint]:
    if isinstance(data, dict) and data.get("format") == LIST_FORMAT:
        items = data.get("checkpoints")
        if not isinstance(items, list):
            raise CheckpointFileError("checkpoints", f"{source}: 'checkpoints' is not a list")
        return [one for item in items for one in _parse(item, source)]
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise CheckpointFileError("checkpoints", f"{source}: not a Safeground log checkpoint")
    statement, signature = data.get("statement"), data.get("signature")
    needed = {"fixture", "entries", "head", "at", "key_id"}
    if not isinstance(statement, dict) or not needed <= set(statement):
        raise CheckpointFileError(
            "checkpoints", f"{source}: the statement needs {', '.join(sorted(needed))}"
        )
    if not isinstance(signature, str):
        raise CheckpointFileError("checkpoints", f"{source}: no signature")
    try:
        int(statement["fixture"]), int(statement["entries"])
    except (TypeError, ValueError):
        raise CheckpointFileError(
            "checkpoints", f"{source}: fixture and entries must be numbers"
        ) from None
    return [Checkpoint(statement=statement, signature=signature, source=source)]


def checkpoints_from_json(data: Any, source: str = "given") -> list[Checkpoint]:
    """Checkpoints from parsed JSON: one checkpoint's file, or a download of them all."""
    return _parse(data, source)


def checkpoints_from_path(path: Path) -> list[Checkpoint]:
    """Checkpoints held outside the database: one file (a checkpoint, or a download of them
    all), or every *.json under a folder (a checkpoint folder, as written)."""
    if path.is_dir():
        files = sorted(p for p in path.rglob("*.json") if p.is_file())
    elif path.is_file():
        files = [path]
    else:
        raise CheckpointFileError("checkpoints", f"{path}: no such file or folder")
    found = []
    for file in files:
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
            raise CheckpointFileError("checkpoints", f"{file}: not JSON ({error})") from None
        found.extend(_parse(data, str(file)))
    return found
