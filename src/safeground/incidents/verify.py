"""Recompute a match's hash chain and name the first entry that does not fit."""

from dataclasses import dataclass

from .chain import GENESIS, entry_hash
from .models import LogEntry


@dataclass(frozen=True)
class ChainBreak:
    seq: int
    entry_id: int
    reason: str


def chain_verify(fixture_id: int) -> tuple[int, ChainBreak | None]:
    """(entries checked, the first break or None)."""
    prev = GENESIS
    expected_seq = 1
    count = 0
    for entry in LogEntry.objects.filter(fixture_id=fixture_id).order_by("seq").iterator():
        count += 1
        if entry.seq != expected_seq:
            return count, ChainBreak(entry.seq, entry.pk, f"expected #{expected_seq} (a gap)")
        if entry.prev_hash != prev:
            return count, ChainBreak(entry.seq, entry.pk, "does not point at the entry before it")
        if entry_hash(prev, entry) != entry.hash:
            return count, ChainBreak(entry.seq, entry.pk, "its content no longer matches its hash")
        prev = entry.hash
        expected_seq += 1
    return count, None
