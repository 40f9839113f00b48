"""Recompute a match's hash chain, check it against its signed checkpoints, and name what is
missing or does not fit.

The chain alone shows an entry changed in place, a gap and a broken link. The checkpoints
(checkpoints.py) show what the chain cannot: newest entries removed (fewer entries than a
checkpoint signed), a chain recomputed after an edit (the head no longer the signed one), an
emptied table (no entries, but signed checkpoints), and a checkpoint itself altered (its
signature fails) or dropped from the database (a copy held outside has it). Given the time,
it also names a finished match whose log was left unanchored (log_verify's `now`): entries no
checkpoint covers after the anchoring job should have signed them.
"""

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.utils import timezone

from safeground import signing
from safeground.matches.models import Fixture

from .chain import GENESIS, entry_hash
from .checkpoints import (
    Checkpoint,
    anchor_job_every,
    checkpoints_from_json,
    full_time_at,
    stored_checkpoints,
)
from .models import LogEntry


@dataclass(frozen=True)
class ChainBreak:
    seq: int
    entry_id: int
    reason: str


@dataclass(frozen=True)
class Problem:
    """One thing that does not verify: a stable code and a sentence naming what is missing."""

    code: str  # chain_break, entries_removed, head_mismatch, table_emptied, bad_signature,
    # unknown_key, other_match, checkpoint_missing, not_anchored
    message: str


@dataclass
class LogCheck:
    """What verify_against found for one match's log."""

    entries: int = 0
    checkpoints: int = 0  # distinct checkpoints checked (database and copies held outside)
    anchored: int = 0  # the most entries a valid checkpoint signed and the log still matches
    signed: int = 0  # the most entries any valid checkpoint signed
    first_unsigned_at: datetime | None = None  # when the entry after `signed` was logged
    not_yet_anchored: str = ""  # entries not signed yet, still within the time allowed
    chain_break: ChainBreak | None = None
    problems: list[Problem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "entries": self.entries,
            "checkpoints": self.checkpoints,
            "anchored": self.anchored,
            "problems": [{"code": p.code, "message": p.message} for p in self.problems],
        }


def _walk(
    entries: Iterable[LogEntry], wanted: set[int], time_of: int = 0
) -> tuple[int, ChainBreak | None, dict, datetime | None]:
    """(entries, the first break, seq -> hash recomputed from the genesis for the seqs wanted,
    when entry #time_of was logged).

    The recomputed hash, not the stored one, is compared with checkpoints: an entry edited in
    place, or edited and every hash after it recomputed, gives a head that was never signed."""
    prev_stored = prev_computed = GENESIS
    expected_seq = 1
    count = 0
    found: ChainBreak | None = None
    heads: dict[int, str] = {}
    logged_at = None
    for entry in entries:
        count += 1
        computed = entry_hash(prev_computed, entry)
        if found is None:
            if entry.seq != expected_seq:
                found = ChainBreak(entry.seq, entry.pk, f"expected #{expected_seq} (a gap)")
            elif entry.prev_hash != prev_stored:
                found = ChainBreak(entry.seq, entry.pk, "does not point at the entry before it")
            elif entry_hash(prev_stored, entry) != entry.hash:
                found = ChainBreak(entry.seq, entry.pk, "its content no longer matches its hash")
        if entry.seq in wanted:
            heads[entry.seq] = computed
        if entry.seq == time_of:
            logged_at = entry.logged_at
        prev_stored, prev_computed = entry.hash, computed
        expected_seq = entry.seq + 1
    return count, found, heads, logged_at


def chain_verify(fixture_id: int) -> tuple[int, ChainBreak | None]:
    """(entries checked, the first break or None): the chain on its own."""
    count, found, _, _ = _walk(_entries(fixture_id), set())
    return count, found


def _entries(fixture_id: int) -> Iterable[LogEntry]:
    return LogEntry.objects.filter(fixture_id=fixture_id).order_by("seq").iterator()


def _distinct(checkpoints: Iterable[Checkpoint]) -> list[Checkpoint]:
    kept: list[Checkpoint] = []
    for checkpoint in checkpoints:
        if not any(checkpoint.same_as(seen) for seen in kept):
            kept.append(checkpoint)
    return sorted(kept, key=lambda c: (c.entries, c.at))


def verify_against(
    entries: Iterable[LogEntry],
    checkpoints: Iterable[Checkpoint | dict[str, Any]],
    *,
    fixture_id: int | None = None,
    stored: Iterable[Checkpoint] | None = None,
) -> LogCheck:
    """Check a match's entries (in seq order) against its signed checkpoints.

    `checkpoints` are every copy at hand (the database's and any held outside), as read or as
    checkpoints_for gives them (a case bundle's); `stored`, when given, are the database's own,
    so a copy held outside that the database lacks is named."""
    given = [
        item
        for one in checkpoints
        for item in (checkpoints_from_json(one) if isinstance(one, dict) else [one])
    ]
    stored_list = list(stored) if stored is not None else None
    every = _distinct([*given, *(stored_list or [])])
    trusted, problems = _signed_by_this_server(every, fixture_id)
    signed_up_to = max((c.entries for c in trusted), default=0)
    count, found, heads, first_unsigned_at = _walk(
        entries, {c.entries for c in trusted}, signed_up_to + 1
    )
    check = LogCheck(
        entries=count,
        checkpoints=len(every),
        signed=signed_up_to,
        first_unsigned_at=first_unsigned_at,
        chain_break=found,
    )
    if found is not None:
        problems.insert(
            0,
            Problem("chain_break", f"entry #{found.seq} (id {found.entry_id}) {found.reason}"),
        )
    if stored_list is not None:
        problems += _missing_from_database(trusted, stored_list)
    check.anchored, losses = _entries_lost(trusted, count, heads)
    # One message per kind of loss is enough when many checkpoints say the same.
    check.problems = _dedupe([*problems, *losses])
    return check


def _signed_by_this_server(
    every: list[Checkpoint], fixture_id: int | None
) -> tuple[list[Checkpoint], list[Problem]]:
    """(the checkpoints of this match that this server's key signed and that still verify,
    a problem for each other one): only the first are trusted to say what the log held."""
    public_key = signing.public_key_raw()
    server_key = signing.key_id(public_key)
    problems: list[Problem] = []
    trusted: list[Checkpoint] = []
    for checkpoint in every:
        where = (
            f"the checkpoint of #{checkpoint.entries} made {checkpoint.at} ({checkpoint.source})"
        )
        if fixture_id is not None and checkpoint.fixture_id != fixture_id:
            problems.append(
                Problem("other_match", f"{where} is of match {checkpoint.fixture_id}, not this one")
            )
            continue
        if checkpoint.key_id != server_key:
            problems.append(
                Problem(
                    "unknown_key",
                    f"{where} is signed by key {checkpoint.key_id}, not this server's key"
                    f" {server_key}: check it with that key's public half",
                )
            )
            continue
        try:
            signature = signing.b64url_decode(checkpoint.signature)
        except ValueError:
            signature = b""
        if not signing.verify(checkpoint.signed_bytes(), signature, public_key):
            problems.append(
                Problem(
                    "bad_signature",
                    f"{where} does not verify: its statement or its signature was altered",
                )
            )
            continue
        trusted.append(checkpoint)
    return trusted, problems


def _missing_from_database(
    trusted: list[Checkpoint], stored_list: list[Checkpoint]
) -> list[Problem]:
    """A problem for each valid checkpoint held outside that the database no longer has."""
    return [
        Problem(
            "checkpoint_missing",
            f"the checkpoint of #{checkpoint.entries} made {checkpoint.at}, held in"
            f" {checkpoint.source}, is missing from the database",
        )
        for checkpoint in trusted
        if checkpoint.source != "database"
        and not any(checkpoint.same_as(kept) for kept in stored_list)
    ]


def _entries_lost(
    trusted: list[Checkpoint], count: int, heads: dict[int, str]
) -> tuple[int, list[Problem]]:
    """(the most entries a checkpoint signed that the log still matches, the problems naming
    entries removed, the table emptied, or a chain recomputed after an edit).

    The first checkpoint that no longer fits bounds the damage; later ones would only repeat it."""
    good_up_to = 0
    problems: list[Problem] = []
    lost: Problem | None = None
    for checkpoint in trusted:
        signed = f"the checkpoint signed {checkpoint.at} counted {checkpoint.entries}"
        if count == 0 and checkpoint.entries > 0:
            lost = Problem(
                "table_emptied",
                f"the log has no entries but {signed}: the table was emptied"
                f" (entries #1..#{checkpoint.entries} are missing)",
            )
        elif checkpoint.entries not in heads:
            lost = Problem(
                "entries_removed",
                f"entries #{count + 1}..#{checkpoint.entries} are missing: {signed}, the log"
                f" has {count}",
            )
        elif heads[checkpoint.entries] != checkpoint.head:
            if lost is None or lost.code != "head_mismatch":
                problems.append(
                    Problem(
                        "head_mismatch",
                        f"the chain up to #{checkpoint.entries} is not the one signed"
                        f" {checkpoint.at}: entries from #{good_up_to + 1} to"
                        f" #{checkpoint.entries} were changed, removed or replaced and the chain"
                        " recomputed (its head does not match)",
                    )
                )
                lost = problems[-1]
        elif lost is None:
            good_up_to = checkpoint.entries
    if lost is not None and lost not in problems:
        problems.append(lost)  # the last (largest) removal or emptying names all that is missing
    return good_up_to, problems


def _dedupe(problems: list[Problem]) -> list[Problem]:
    kept: list[Problem] = []
    for problem in problems:
        if problem not in kept:
            kept.append(problem)
    return kept


def log_verify(
    fixture_id: int, held: Iterable[Checkpoint] = (), *, now: datetime | None = None
) -> LogCheck:
    """A match's log against its checkpoints in the database and any copies `held` outside it;
    given `now`, also whether entries were left unanchored longer than the anchoring job allows
    (_anchoring)."""
    stored = stored_checkpoints(fixture_id)
    mine = [checkpoint for checkpoint in held if checkpoint.fixture_id == fixture_id]
    check = verify_against(_entries(fixture_id), mine, fixture_id=fixture_id, stored=stored)
    if now is not None:
        _anchoring(check, fixture_id, now)
    return check


def _anchoring(check: LogCheck, fixture_id: int, now: datetime) -> None:
    """Name entries no checkpoint covers, if the anchoring job should have signed them by now.

    While the match is on, entries may wait WITHIN_MINUTES for their checkpoint: not yet
    anchored, said but no failure. Once it is over (full_time_at, and a run of the job after),
    the job has signed the head, so entries still unsigned fail: a log with no checkpoint at
    all, or entries left unsigned longer than WITHIN_MINUTES: nothing shows whether its newest
    entries were removed, so it cannot be taken as whole."""
    if check.entries <= check.signed:
        return
    kickoff = Fixture.objects.filter(pk=fixture_id).values_list("kickoff", flat=True).first()
    if kickoff is None:
        return
    grace = anchor_job_every() + timedelta(minutes=1)  # the job's next run, and its time to run
    within = timedelta(minutes=settings.SAFEGROUND_CHECKPOINT_WITHIN_MINUTES)
    full_time = full_time_at(kickoff)
    unsigned = f"entries #{check.signed + 1}..#{check.entries}"
    logged = check.first_unsigned_at
    since = f", the oldest logged {_local(logged)}" if logged else ""
    over = now >= full_time + grace
    overdue = logged is None or now > logged + within + grace
    if over and (check.signed == 0 or overdue):
        signed = (
            "no signed checkpoint at all"
            if check.signed == 0
            else f"the last checkpoint signed #{check.signed}"
        )
        check.problems.append(
            Problem(
                "not_anchored",
                f"the match is over (full time and its margin: {_local(full_time)}) but"
                f" {unsigned} are not anchored: {signed}{since}. The newest"
                " entries may have been removed without trace, or the anchoring job is not"
                " running (docs/deploy.md)",
            )
        )
    else:
        check.not_yet_anchored = f"{unsigned} not anchored yet{since}"


def _local(moment: datetime) -> str:
    return f"{timezone.localtime(moment):%Y-%m-%d %H:%M %Z}"
