"""The arrival for a match, played through the turnstiles: the gates demo (`safeground
replay-arrival`). Every scan goes through entry.scans.scan_decide, as a turnstile's would.

The plan is fixed by a seed: most ticket holders arrive in the hour before kick-off (more of them
late), each at a turnstile of a gate that serves their block for their end; a few go to a gate of
the other end first (wrong_end), a few are scanned twice (already_inside), a few barcodes are
forged (unknown_ticket), and flagged holders are turned away (banned once their flag is confirmed,
"check identity" while it is open).
"""

import random
import threading
import time
import uuid
import zlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db import connection

from safeground.accounts.models import Device
from safeground.accounts.services import device_create
from safeground.entry.models import Scan, Ticket
from safeground.entry.runtime import lookups
from safeground.entry.scans import ScanResult, scan_decide
from safeground.matches.models import Fixture
from safeground.venues.models import Gate, Turnstile

SEED = 2016
NAMESPACE = uuid.UUID("5a4e9b1c-2f1e-4c39-9a0e-6f1d2c3b4a59")
DEVICE_NAME = "Arrival replay"


def arrival_device(fixture: Fixture) -> Device:
    """The home club's turnstile key the demo scans with (the night's refusals, the arrival)."""
    organisation = fixture.ground.organisation
    device = Device.objects.filter(organisation=organisation, name=DEVICE_NAME).first()
    if device is None:
        device, _key = device_create(
            organisation=organisation, name=DEVICE_NAME, profile=Device.Profile.TURNSTILE
        )
    return device


def device_info(device: Device) -> lookups.DeviceInfo:
    return lookups.DeviceInfo(
        device.pk,
        device.organisation_id,
        device.name,
        device.profile,
        device.get_profile_display(),
    )


@dataclass(frozen=True)
class PlannedScan:
    at: datetime
    barcode: str
    turnstile: str
    direction: str = Scan.Direction.IN


def arrival_plan(
    fixture: Fixture,
    *,
    share: float = 0.93,
    wrong_end: float = 0.004,
    twice: float = 0.003,
    forged: int = 25,
    seed: int = SEED,
) -> list[PlannedScan]:
    """The scans of an arrival, in time order."""
    rng = random.Random(seed)
    kickoff = fixture.kickoff
    turnstiles: dict[int, list[str]] = {}
    for gate_id, code in Turnstile.objects.filter(gate__ground=fixture.ground).values_list(
        "gate_id", "code"
    ):
        turnstiles.setdefault(gate_id, []).append(code)
    gates = list(Gate.objects.filter(ground=fixture.ground).prefetch_related("blocks"))
    ends = {gate.pk: lookups.gate_ends(fixture.pk, gate.pk) for gate in gates}
    serving: dict[tuple[int, str], list[int]] = {}
    for gate in gates:
        for block in gate.blocks.all():
            for end in ("home", "away"):
                if getattr(ends[gate.pk], end) and turnstiles.get(gate.pk):
                    serving.setdefault((block.pk, end), []).append(gate.pk)
    other_end = {
        end: [g.pk for g in gates if turnstiles.get(g.pk) and not getattr(ends[g.pk], end)]
        for end in ("home", "away")
    }

    def moment() -> datetime:
        # Minutes before kick-off: most in the last half hour, a tail back to an hour.
        minutes = 60 * rng.betavariate(1.4, 2.6)
        return kickoff - timedelta(minutes=minutes, seconds=rng.random())

    plan: list[PlannedScan] = []
    tickets = Ticket.objects.filter(fixture=fixture).values_list("barcode", "block_id", "end")
    for barcode, block_id, end in tickets.order_by("pk").iterator(chunk_size=5000):
        if rng.random() > share:
            continue  # did not come
        at = moment()
        right = serving.get((block_id, end)) or [g.pk for g in gates if turnstiles.get(g.pk)]
        if rng.random() < wrong_end and other_end[end]:
            wrong = rng.choice(other_end[end])
            plan.append(PlannedScan(at, barcode, rng.choice(turnstiles[wrong])))
            at += timedelta(minutes=rng.uniform(3, 10))  # walked round to the right gate
        gate_id = rng.choice(right)
        plan.append(PlannedScan(at, barcode, rng.choice(turnstiles[gate_id])))
        if rng.random() < twice:  # the same ticket again: passed back over the turnstile
            again = rng.choice(turnstiles[rng.choice(right)])
            plan.append(PlannedScan(at + timedelta(seconds=rng.uniform(20, 300)), barcode, again))
    everywhere = [code for codes in turnstiles.values() for code in codes]
    for n in range(forged):
        plan.append(PlannedScan(moment(), f"FORGED-{seed}-{n:03d}", rng.choice(everywhere)))
    plan.sort(key=lambda scan: scan.at)
    return plan


@dataclass
class Tally:
    scans: int = 0
    admitted: int = 0
    replayed: int = 0
    at: datetime | None = None  # the latest time scanned so far
    denied: Counter[str] = field(default_factory=Counter)

    def add(self, scan: PlannedScan, result: ScanResult) -> None:
        self.scans += 1
        self.replayed += result.replayed
        self.at = scan.at if self.at is None else max(self.at, scan.at)
        if result.decision == Scan.Decision.ADMIT:
            self.admitted += 1
        else:
            self.denied[result.reason or "?"] += 1


def arrival_replay(
    plan: list[PlannedScan],
    *,
    device: lookups.DeviceInfo,
    speed: float,
    seed: int = SEED,
    lanes: int = 1,
    on_progress: Callable[[datetime, Tally], None] | None = None,
    progress_every: timedelta = timedelta(minutes=5),
) -> Tally:
    """Play the plan through scan_decide, `speed` times real time (0: as fast as it goes), on
    `lanes` threads like turnstiles side by side (each ticket's scans stay in one lane, in order).
    Nonces come from the seed and the scan's place in the plan: a second run without a reset
    answers from the stored scans and stores nothing new (as a turnstile's retry would)."""
    tally = Tally()
    if not plan:
        return tally
    lock = threading.Lock()
    started, first = time.monotonic(), plan[0].at
    queues: list[list[tuple[int, PlannedScan]]] = [[] for _ in range(max(1, lanes))]
    for index, scan in enumerate(plan):
        queues[zlib.crc32(scan.barcode.encode()) % len(queues)].append((index, scan))
    failures: list[BaseException] = []

    next_report = [first + progress_every]

    def report() -> None:
        if on_progress and tally.at is not None and tally.at >= next_report[0]:
            on_progress(tally.at, tally)
            next_report[0] += progress_every

    def lane(queue: list[tuple[int, PlannedScan]], *, inline: bool = False) -> None:
        try:
            for index, scan in queue:
                if speed > 0:
                    wait = started + (scan.at - first).total_seconds() / speed - time.monotonic()
                    if wait > 0:
                        time.sleep(wait)
                result = scan_decide(
                    device=device,
                    turnstile=scan.turnstile,
                    barcode=scan.barcode,
                    scanned_at=scan.at,
                    nonce=uuid.uuid5(NAMESPACE, f"{seed}:{index}"),
                    direction=scan.direction,
                )
                with lock:
                    tally.add(scan, result)
                if inline:
                    report()
        except BaseException as error:  # raised again below, on the caller's thread
            failures.append(error)
        finally:
            if not inline:
                connection.close()  # this thread's own

    if len(queues) == 1:  # on the caller's thread and connection (SQLite; tests)
        lane(queues[0], inline=True)
    else:
        threads = [threading.Thread(target=lane, args=(queue,), daemon=True) for queue in queues]
        for thread in threads:
            thread.start()
        while any(thread.is_alive() for thread in threads):
            time.sleep(0.1)
            with lock:
                report()
    if failures:
        raise failures[0]
    if on_progress:
        on_progress(plan[-1].at, tally)
    return tally
