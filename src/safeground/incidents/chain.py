"""The hash chain: each entry's SHA-256 covers the previous hash and its own canonical form."""

import hashlib
import json
from typing import Any

from safeground import clock

from .models import LogEntry

GENESIS = "0" * 64


def _time(value: Any) -> str:
    return clock.utc_iso(value, "microseconds")


def canonical(entry: LogEntry) -> bytes:
    """Every stored field but the hashes, in a fixed, documented form (docs/log-chain.md)."""
    fields = {
        "fixture": entry.fixture_id,
        "seq": entry.seq,
        "kind": entry.kind,
        "concerns": entry.concerns_id,
        "observed_at": _time(entry.observed_at),
        "logged_at": _time(entry.logged_at),
        "author": entry.author_id,
        "author_name": entry.author_name,
        "author_role": entry.author_role,
        "block": entry.block_id,
        "first_row": entry.first_row,
        "last_row": entry.last_row,
        "zone": entry.zone_id,
        "gate": entry.gate_id,
        "concourse": entry.concourse_id,
        "outside": entry.outside,
        "category": entry.category_id,
        "severity": entry.severity,
        "text": entry.text,
        "note": entry.note,
        "status": entry.status,
        "assignee": entry.assignee_id,
        "escalated_to": entry.escalated_to,
        "task": entry.task,
        "links": list(entry.links),
        "home_only": entry.home_only,
        "idempotency_key": entry.idempotency_key,
    }
    # The device's own clock (ADR 0026), only where it was given: entries written before these
    # fields hash as they always did.
    for name in ("device_observed_at", "device_sent_at"):
        if (value := getattr(entry, name)) is not None:
            fields[name] = _time(value)
    return json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def entry_hash(prev_hash: str, entry: LogEntry) -> str:
    return hashlib.sha256(prev_hash.encode() + b"\n" + canonical(entry)).hexdigest()
