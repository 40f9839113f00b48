"""Gate pressure, live (issue 41; docs/adr/0025-gate-pressure.md): per gate and per turnstile,
the rate of arrivals against the gate's Green Guide entry capacity, the queue the arrivals imply,
the denials by reason, and the gate warnings, each naming its causes and figures.

A scan costs one counter update here (`scan_count`: a dict increment under a lock, in the
process that decided it), keyed by gate, turnstile, reason and the 5-second bucket of the time it
was scanned: an offline scan counts when it arrives, in its own time (an old one lands in the
gate's recent past, not in its last minute). No query per scan. Every
SAFEGROUND_GATE_PRESSURE_EVERY seconds while scans arrive (and while a warning stands) the
counts are assessed on a background thread (safeground.background, through live_counts'
Throttle) and published to the match's control room as `entry.gates`.

The rules are `gates_assess`'s, a pure function of the counts, the gates and the policy file's
`gates` section (matches.policy.GatePolicy), so each is tested on its own.

With several server processes (REDIS_URL set) each counts the scans it decided and, at each of
its rounds, adds what it counted since its last round to the match's counts in Redis (one
pipeline: HINCRBY per key); one process a round (the first to claim it, as live_counts does)
reads them back and assesses the whole ground, so every screen sees one picture, not each
process's share.

A warning that starts is told to the log once (services.gate_warnings_keep, after the publish:
a kept row per gate and cause, so whichever process assesses a round knows what already stands).
"""

import os
import threading
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

from django.conf import settings
from django.utils import timezone
from django.utils.translation import gettext

from safeground import clock
from safeground.matches.policy import GatePolicy, policy_current
from safeground.venues.capacity import GateEntry, gate_entry_capacities

from .rules import BY_CODE
from .runtime.live_counts import Throttle

BUCKET_SECONDS = 5
ADMITTED = ""  # the reason of an admission in the counts

# (gate, turnstile, bucket, reason) -> scans in; reason "" for an admission.
type Key = tuple[int, int, int, str]


class GateCounts:
    """The scans in each match's gates, as they are decided; the buckets older than any rule
    looks at are dropped when the match is assessed."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: dict[int, Counter[Key]] = {}
        self._grounds: dict[int, int] = {}  # fixture -> ground
        self._unshared: dict[int, Counter[Key]] = {}  # Redis mode: counted since the last round

    def count(
        self,
        *,
        fixture_id: int,
        ground_id: int,
        gate_id: int,
        turnstile_id: int,
        scanned_at: datetime,
        reason: str,
    ) -> None:
        bucket = int(scanned_at.timestamp()) // BUCKET_SECONDS
        kept = self._unshared if settings.REDIS_URL else self._counts
        with self._lock:
            counts = kept.get(fixture_id)
            if counts is None:
                counts = kept[fixture_id] = Counter()
            self._grounds[fixture_id] = ground_id
            counts[gate_id, turnstile_id, bucket, reason] += 1

    def unshared(self, fixture_id: int) -> tuple[int | None, Counter[Key]]:
        """(ground, what was counted since the last call), taken: Redis mode's share."""
        with self._lock:
            return self._grounds.get(fixture_id), self._unshared.pop(fixture_id, Counter())

    def snapshot(self, fixture_id: int, keep_from: int) -> tuple[int | None, dict[Key, int]]:
        """(ground, the counts from bucket `keep_from` on); older buckets are dropped."""
        with self._lock:
            counts = self._counts.get(fixture_id)
            if counts is None:
                return None, {}
            for key in [key for key in counts if key[2] < keep_from]:
                del counts[key]
            return self._grounds[fixture_id], dict(counts)

    def clear(self) -> None:
        with self._lock:
            self._counts.clear()
            self._grounds.clear()
            self._unshared.clear()


counts = GateCounts()


@dataclass(frozen=True)
class Warning:
    """A gate warning: its kind, the gate (and turnstile), and the figures that caused it."""

    kind: str  # "jump", "capacity" or "silent"
    gate: str
    figures: dict[str, Any]
    reasons: tuple[str, ...] = ()  # jump: the reason codes counted together
    turnstile: str = ""  # silent: the turnstile


@dataclass
class GateFigures:
    gate: str
    capacity_per_minute: float
    arrivals_per_minute: float  # every scan in, in the last window, a minute
    admitted_per_minute: float
    queue: int  # people the arrivals imply are waiting beyond what the capacity took in
    queue_minutes: float  # to clear it at the capacity
    denied: dict[str, int]  # reason -> denials in the last window
    turnstiles: list[dict[str, Any]] = field(default_factory=list)  # code, per_minute, silent


def gates_assess(
    counted: Mapping[Key, int],
    gates: Mapping[int, GateEntry],
    now: float,
    policy: GatePolicy,
) -> tuple[list[GateFigures], list[Warning]]:
    """Each gate's figures and the warnings their counts raise at `now` (a POSIX time)."""
    window_from = now - policy.window_seconds
    baseline_from = window_from - 60 * policy.baseline_minutes
    silent_from = now - policy.silent_seconds
    by_gate: dict[int, list[tuple[int, float, str, int]]] = {}
    for (gate_id, turnstile_id, bucket, reason), n in counted.items():
        if bucket * BUCKET_SECONDS <= now:  # none scanned after the moment assessed
            by_gate.setdefault(gate_id, []).append(
                (turnstile_id, bucket * BUCKET_SECONDS, reason, n)
            )
    figures: list[GateFigures] = []
    warnings: list[Warning] = []
    window_minutes = policy.window_seconds / 60
    for gate_id, gate in sorted(gates.items(), key=lambda item: item[1].name):
        rows = by_gate.get(gate_id, [])
        recent = [(t, r, n) for t, at, r, n in rows if at >= window_from]
        before = [(t, r, n) for t, at, r, n in rows if baseline_from <= at < window_from]
        denied: Counter[str] = Counter()
        for _t, reason, n in recent:
            if reason != ADMITTED:
                denied[reason] += n
        arrivals = sum(n for _t, _r, n in recent)
        admitted = arrivals - sum(denied.values())
        queue = _queue(rows, gate.per_minute, baseline_from, now)
        figures.append(
            GateFigures(
                gate=gate.name,
                capacity_per_minute=round(gate.per_minute, 1),
                arrivals_per_minute=round(arrivals / window_minutes, 1),
                admitted_per_minute=round(admitted / window_minutes, 1),
                queue=queue,
                queue_minutes=round(queue / gate.per_minute, 1) if gate.per_minute else 0.0,
                denied=dict(denied),
                turnstiles=_turnstiles(rows, gate, silent_from, policy),
            )
        )
        warnings += _jumps(gate, recent, before, policy)
        warnings += _capacity(gate, rows, now, policy)
        warnings += _silent(gate, figures[-1].turnstiles, policy)
    return figures, warnings


def _jumps(
    gate: GateEntry,
    recent: list[tuple[int, str, int]],
    before: list[tuple[int, str, int]],
    policy: GatePolicy,
) -> list[Warning]:
    """A group of reasons whose denials in the window jump against the gate's own rate before."""
    found = []
    for reasons in policy.jump_reasons:
        now_count = sum(n for _t, r, n in recent if r in reasons)
        before_count = sum(n for _t, r, n in before if r in reasons)
        now_rate = now_count / (policy.window_seconds / 60)
        before_rate = before_count / policy.baseline_minutes
        if now_count >= policy.jump_at_least and now_rate >= policy.jump_factor * before_rate:
            found.append(
                Warning(
                    "jump",
                    gate.name,
                    {
                        "count": now_count,
                        "seconds": policy.window_seconds,
                        "per_minute": round(now_rate, 1),
                        "before_per_minute": round(before_rate, 1),
                        "baseline_minutes": policy.baseline_minutes,
                        "factor": policy.jump_factor,
                    },
                    reasons=tuple(reasons),
                )
            )
    return found


def _per_minute(rows: list[tuple[int, float, str, int]], start: float, minutes: int) -> list[int]:
    """Arrivals in each whole minute from `start`, oldest first."""
    arrivals = [0] * minutes
    for _t, at, _r, n in rows:
        minute = int((at - start) // 60)
        if 0 <= minute < minutes:
            arrivals[minute] += n
    return arrivals


def _capacity(
    gate: GateEntry, rows: list[tuple[int, float, str, int]], now: float, policy: GatePolicy
) -> list[Warning]:
    """Arrivals above the gate's entry capacity in every one of the last few minutes."""
    minutes = policy.capacity_minutes
    arrivals = _per_minute(rows, now - 60 * minutes, minutes)
    if not gate.per_minute or min(arrivals) <= gate.per_minute:
        return []
    figures = {
        "minutes": minutes,
        "arrivals_per_minute": round(sum(arrivals) / minutes, 1),
        "capacity_per_minute": round(gate.per_minute, 1),
        "turnstiles": len(gate.turnstiles),
    }
    return [Warning("capacity", gate.name, figures)]


def _queue(
    rows: list[tuple[int, float, str, int]], per_minute: float, start: float, now: float
) -> int:
    """The people still waiting if the gate took in its capacity each minute: arrivals beyond it
    carried forward, minute by minute, from `start`."""
    waiting = 0.0
    for arrived in _per_minute(rows, start, max(1, round((now - start) / 60))):
        waiting = max(0.0, waiting + arrived - per_minute)
    return round(waiting)


def _turnstiles(
    rows: list[tuple[int, float, str, int]],
    gate: GateEntry,
    silent_from: float,
    policy: GatePolicy,
) -> list[dict[str, Any]]:
    """Each turnstile of the gate: its scans a minute lately, and whether it has gone silent
    (scanned before, nothing for silent_seconds) while the others are busy."""
    lately: Counter[int] = Counter()
    earlier: Counter[int] = Counter()
    for t, at, _r, n in rows:
        (lately if at >= silent_from else earlier)[t] += n
    minutes = policy.silent_seconds / 60
    busy = [t for t in gate.turnstiles if lately[t] / minutes >= policy.busy_per_minute]
    found = []
    for t, code in sorted(gate.turnstiles.items(), key=lambda item: item[1]):
        others = [
            lately[o] / minutes for o in gate.turnstiles if o != t and (lately[o] or earlier[o])
        ]
        silent = (
            not lately[t]
            and earlier[t] > 0
            and bool(others)
            and sum(others) / len(others) >= policy.busy_per_minute
            and bool(busy)
        )
        found.append({"code": code, "per_minute": round(lately[t] / minutes, 1), "silent": silent})
    return found


def _silent(gate: GateEntry, turnstiles: list[dict[str, Any]], policy: GatePolicy) -> list[Warning]:
    busy = [t["per_minute"] for t in turnstiles if t["per_minute"]]
    return [
        Warning(
            "silent",
            gate.name,
            {
                "seconds": policy.silent_seconds,
                "others_per_minute": round(sum(busy) / len(busy), 1),
                "busy_turnstiles": len(busy),
            },
            turnstile=t["code"],
        )
        for t in turnstiles
        if t["silent"]
    ]


def warning_cause(warning: Mapping[str, Any]) -> str:
    """What tells a gate's warnings apart (GateWarned.cause): its kind, and the reasons counted
    together or the turnstile gone silent."""
    if warning["kind"] == "jump":
        return "jump:" + ",".join(warning["reasons"])
    if warning["kind"] == "silent":
        return f"silent:{warning['turnstile']}"
    return str(warning["kind"])


def _n(x: float) -> str:
    """A figure as the control room's script writes it (en-GB: 1,234.5)."""
    return f"{x:,.3f}".rstrip("0").rstrip(".")


def warning_words(warning: Mapping[str, Any]) -> str:
    """A gate warning (as published: asdict(Warning)) in the active language: the words the
    Gates tab says it in (incidents.control_room_words), the reasons by the reason table's
    names."""
    f = warning["figures"]
    if warning["kind"] == "jump":
        reasons = gettext(" or ").join(
            gettext(BY_CODE[code].label) if code in BY_CODE else code for code in warning["reasons"]
        )
        return gettext(
            "{gate}: {reasons}, {count} in the last {seconds} s ({perMinute} a minute against"
            " the gate's {before} a minute over the {minutes} minutes before)"
        ).format(
            gate=warning["gate"], reasons=reasons, count=_n(f["count"]), seconds=f["seconds"],
            perMinute=_n(f["per_minute"]), before=_n(f["before_per_minute"]),
            minutes=f["baseline_minutes"],
        )  # fmt: skip
    if warning["kind"] == "capacity":
        return gettext(
            "{gate}: {arrivals} arriving a minute against an entry capacity of {capacity} a"
            " minute ({turnstiles} turnstiles) for {minutes} minutes"
        ).format(
            gate=warning["gate"], arrivals=_n(f["arrivals_per_minute"]),
            capacity=_n(f["capacity_per_minute"]), turnstiles=f["turnstiles"],
            minutes=f["minutes"],
        )  # fmt: skip
    return gettext(
        "{gate}: turnstile {turnstile} has scanned nothing for {seconds} s while the gate's"
        " other {busy} turnstiles scan {others} a minute each"
    ).format(
        gate=warning["gate"], turnstile=warning["turnstile"], seconds=f["seconds"],
        busy=f["busy_turnstiles"], others=_n(f["others_per_minute"]),
    )  # fmt: skip


# --- counting and publishing ---------------------------------------------------------------------


def scan_count(
    *, fixture_id: int, ground_id: int, gate_id: int, turnstile_id: int, scanned_at: datetime,
    direction: str, reason: str,
) -> None:  # fmt: skip
    """One scan decided (online, or uploaded from offline): counted, and the gates due to be
    assessed. Exits are not arrivals."""
    if direction != "in":
        return
    counts.count(
        fixture_id=fixture_id,
        ground_id=ground_id,
        gate_id=gate_id,
        turnstile_id=turnstile_id,
        scanned_at=scanned_at,
        reason=reason,
    )
    throttle.touch(fixture_id)


def gates_figures(fixture_id: int, now: datetime | None = None) -> dict[str, Any] | None:
    """The match's gate figures and warnings now (None: no scans counted, or in Redis mode
    another process assesses them this round)."""
    policy = policy_current().gates
    moment = (now or timezone.now()).timestamp()
    oldest = (
        moment - policy.window_seconds - 60 * max(policy.baseline_minutes, policy.capacity_minutes)
    )
    keep_from = int(oldest) // BUCKET_SECONDS
    if settings.REDIS_URL:
        ground_id, counted = _shared(fixture_id, keep_from)
    else:
        ground_id, counted = counts.snapshot(fixture_id, keep_from)
    if ground_id is None:
        return None
    gates = gate_entry_capacities(ground_id)
    figures, warnings = gates_assess(counted, gates, moment, policy)
    return {
        "fixture": fixture_id,
        "at": clock.iso(now or timezone.now()),
        "gates": [asdict(f) for f in figures],
        "warnings": [asdict(w) for w in warnings],
        # Not sent: which gate each warning is at, for the warnings kept (gates_publish).
        "gate_ids": {gate.name: gate.gate_id for gate in gates.values()},
    }


def _shared(fixture_id: int, keep_from: int) -> tuple[int | None, dict[Key, int]]:
    """Redis mode: this process's counts since its last round added to the match's, and all of
    them read back if this process assesses this round (else no ground: another one does)."""
    from safeground.live.transport import redis_client

    client = redis_client(settings.REDIS_URL)
    key = f"safeground:gate-counts:{fixture_id}"
    ground_id, mine = counts.unshared(fixture_id)
    if mine:
        pipe = client.pipeline(transaction=False)
        for (gate, turnstile, bucket, reason), n in mine.items():
            pipe.hincrby(key, f"{gate}:{turnstile}:{bucket}:{reason}", n)
        pipe.hset(key, "ground", ground_id or 0)
        pipe.expire(key, (int(time.time()) // BUCKET_SECONDS - keep_from) * BUCKET_SECONDS + 60)
        pipe.execute()
    every_ms = max(1, round(1000 * _every()))
    if not client.set(f"{key}:round", os.getpid(), nx=True, px=every_ms):
        return None, {}
    found: dict[Key, int] = {}
    old = []
    ground = None
    for field_name, value in client.hgetall(key).items():
        name = field_name.decode() if isinstance(field_name, bytes) else str(field_name)
        if name == "ground":
            ground = int(value) or None
            continue
        at_gate, at_turnstile, in_bucket, reason = name.split(":", 3)
        if int(in_bucket) < keep_from:
            old.append(field_name)
            continue
        found[int(at_gate), int(at_turnstile), int(in_bucket), reason] = int(value)
    if old:
        client.hdel(key, *old)
    return ground, found


def gates_publish(fixture_id: int, now: datetime | None = None) -> float | None:
    """Assess the match's gates and send the figures to its control room. While a warning stands
    it is assessed again after the interval even if no scan comes (so it clears when it ends)."""
    from safeground.live.catalogue import ENTRY_GATES
    from safeground.live.events import publish

    from .services import gate_warnings_keep

    data = gates_figures(fixture_id, now)
    if data is None:
        return None
    gate_ids = data.pop("gate_ids")
    publish(fixture_id=fixture_id, type=ENTRY_GATES, data=data)
    # The warnings that started (or ended) since the last round are kept, and each onset told to
    # the log once (entry.hooks.gate_warned), whichever process assesses this round.
    gate_warnings_keep(
        fixture_id=fixture_id,
        warnings=[(gate_ids[w["gate"]], w) for w in data["warnings"]],
        at=now or timezone.now(),
    )
    return _every() if data["warnings"] else None


def _every() -> float:
    return float(settings.SAFEGROUND_GATE_PRESSURE_EVERY)


throttle = Throttle(publish=gates_publish, every=_every, name="gate pressure")
