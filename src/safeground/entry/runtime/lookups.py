"""What a scan needs to know besides the ticket, kept a few seconds in each process.

A turnstile sends thousands of scans a minute with the same key, at the same turnstile, for the
same match: reading the device, the turnstile, the match and which ends its gate serves from the
database every time would cost four round trips per scan. Each is cached here for
`SAFEGROUND_ENTRY_CACHE_SECONDS` (default 5): a revoked key, a moved turnstile, a changed zone
layout or re-entry rule takes effect in every process within that time
(docs/adr/0005-turnstile-decisions.md).
Only found things are kept; an unknown key or turnstile is looked up again each time.

On the event loop (entry/runtime/asgi.py on PostgreSQL) every lookup is asked for with
`cached_only=True`: a hit is answered at once, without the database; a miss raises NotCached and
the scan goes to a thread, which loads it through Django and fills the cache for the scans after
it. So that a turnstile scanning steadily never meets an expired entry (and a scan never waits
for its reload), the loop has an entry reloaded on a scan thread once it is past REFRESH_AT of
its time (`reloads_due`), while the entry still answers.

While the database is away an entry whose reload failed for that reason goes on answering on the
loop past its time (a scan is decided only once the database answers its statement anyway) and is
reloaded again at the next scan: when the database returns the loop decides scans at once,
instead of every scan waiting on a thread for a connection until the caches are filled again.
A key revoked just before an outage therefore stops working at the first reload after it. While
an outage is known (safeground.outage) scans are refused before they look anything up, so every
entry answers on through it and for one cache time after it, each reloaded at its next use.
"""

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import InterfaceError, OperationalError
from django.utils import timezone

from safeground.accounts.models import Device
from safeground.accounts.services import device_key_hash
from safeground.matches.models import Fixture, FixtureZone
from safeground.outage import outage
from safeground.venues.models import Block, Gate, Turnstile, ZoneBlock

logger = logging.getLogger(__name__)

MAX_ENTRIES = 10_000  # per cache; past it a cache starts again (keys are few in practice)
# Share of SAFEGROUND_ENTRY_CACHE_SECONDS after which a hit on the loop has its entry reloaded.
REFRESH_AT = 0.5

_reloads: deque[Callable[[], None]] = deque()  # asked for on the loop, run on a scan thread


def reloads_due() -> list[Callable[[], None]]:
    """The reloads the loop has asked for since the last call, for a scan thread to run."""
    due = []
    while _reloads:
        due.append(_reloads.popleft())
    return due


class NotCached(Exception):
    """Asked for with `cached_only=True`, and only the database has it (missing or expired)."""


class TTLCache:
    """A dict whose entries expire; shared by a process's threads.

    When an entry expires, one thread reloads it while the others go on with the old value for
    the moment that takes (no stampede of identical queries every few seconds at 2,000 scans/s);
    an entry never outlives its time by more than one reload."""

    def __init__(self) -> None:
        self._data: dict[Hashable, tuple[float, Any]] = {}
        self._loading: set[Hashable] = set()
        # Asked for ahead of time; apart from _loading, so that one never run lets the entry
        # expire as it would have.
        self._reloading: set[Hashable] = set()
        # Whose last reload met the database away: they answer past their time (see above).
        self._away: set[Hashable] = set()
        self._lock = threading.Lock()

    def get[V](
        self, key: Hashable, load: Callable[[], V | None], *, cached_only: bool = False
    ) -> V | None:
        now = time.monotonic()
        hit = self._data.get(key)
        if hit is None:
            if cached_only:
                raise NotCached(key)
        else:
            age, lifetime = now - hit[0], settings.SAFEGROUND_ENTRY_CACHE_SECONDS
            if age < lifetime or (cached_only and (key in self._away or outage.recent(lifetime))):
                if cached_only and age >= REFRESH_AT * lifetime:
                    with self._lock:
                        if key not in self._reloading:
                            self._reloading.add(key)
                            _reloads.append(lambda: self._reload(key, load))
                value: V = hit[1]
                return value
            with self._lock:
                if key in self._loading:  # another thread is reloading it
                    stale: V = hit[1]
                    return stale
                if cached_only:
                    raise NotCached(key)
                self._loading.add(key)
        return self._load(key, load, now)

    def _load[V](self, key: Hashable, load: Callable[[], V | None], now: float) -> V | None:
        try:
            loaded = load()
            self._away.discard(key)
            if loaded is not None:
                if len(self._data) >= MAX_ENTRIES:
                    self._data.clear()
                self._data[key] = (now, loaded)
            else:
                self._data.pop(key, None)
            return loaded
        finally:
            with self._lock:
                self._loading.discard(key)
                self._reloading.discard(key)

    def _reload(self, key: Hashable, load: Callable[[], Any]) -> None:
        """An entry reloaded ahead of its time (on a scan thread, for the loop)."""
        try:
            self._load(key, load, time.monotonic())
        except Exception as error:
            if isinstance(error, OperationalError | InterfaceError):
                # It answers on, and is reloaded again at the next scan; the outage is logged
                # by safeground.outage, from the scans it refuses, not here per reload.
                self._away.add(key)
            else:
                # The next scan that needs it loads it itself, and meets the error there.
                self._data.pop(key, None)
                logger.warning("reloading %r failed", key, exc_info=True)
            raise  # a scan thread drops a failed connection (runtime.threads.in_scan_thread_soon)

    def put(self, key: Hashable, value: Any) -> None:
        """An entry loaded ahead of its first use (caches_warm)."""
        if len(self._data) >= MAX_ENTRIES:
            self._data.clear()
        self._data[key] = (time.monotonic(), value)

    def clear(self) -> None:
        self._data.clear()
        self._reloading.clear()
        self._away.clear()

    def forget(self, key: Hashable) -> None:
        self._data.pop(key, None)


@dataclass(frozen=True)
class DeviceInfo:
    id: int
    organisation_id: int
    name: str
    profile: str
    profile_label: str


@dataclass(frozen=True)
class TurnstileInfo:
    id: int
    code: str
    gate_id: int
    gate_name: str
    ground_id: int


@dataclass(frozen=True)
class GroundInfo:
    """A ground's gates and which gates serve each block (for the steward's messages)."""

    gate_names: dict[int, str]
    block_codes: dict[int, str]
    block_gates: dict[int, tuple[str, ...]]
    fixtures: tuple[tuple[int, datetime], ...]  # (id, kick-off) of every match there


@dataclass(frozen=True)
class GateEnds:
    """For one match and one gate: the ends the gate lets in, the match day (for bans) and the
    match's re-entry rule."""

    home: bool
    away: bool
    day: date
    reentry: bool


_devices = TTLCache()
_turnstiles = TTLCache()
_grounds = TTLCache()
_gate_ends = TTLCache()


def caches_clear() -> None:
    """Forget everything (tests; a process that must see a revocation at once)."""
    for cache in (_devices, _turnstiles, _grounds, _gate_ends):
        cache.clear()


def device_forget(key_hash: str) -> None:
    """A revoked key leaves this process's cache at once (accounts.services.device_revoked)."""
    _devices.forget(key_hash)


def device_for_key(key: str, *, cached_only: bool = False) -> DeviceInfo | None:
    """The live device holding this key, cached by the key's hash."""
    key_hash = device_key_hash(key)

    def load() -> DeviceInfo | None:
        row = (
            Device.objects.filter(key_hash=key_hash, revoked_at__isnull=True)
            .values_list("pk", "organisation_id", "name", "profile")
            .first()
        )
        if row is None:
            return None
        pk, organisation_id, name, profile = row
        label = Device.Profile(profile).label if profile in Device.Profile.values else profile
        return DeviceInfo(pk, organisation_id, name, profile, str(label))

    return _devices.get(key_hash, load, cached_only=cached_only)


class AmbiguousTurnstile(Exception):
    pass


def turnstile_for(
    organisation_id: int, code: str, *, cached_only: bool = False
) -> TurnstileInfo | None:
    """The turnstile with this code at one of the organisation's grounds."""

    def load() -> TurnstileInfo | None:
        rows = list(
            Turnstile.objects.filter(code=code, gate__ground__organisation_id=organisation_id)
            .values_list("pk", "code", "gate_id", "gate__name", "gate__ground_id")
            .order_by("pk")[:2]
        )
        if len(rows) > 1:
            raise AmbiguousTurnstile(code)
        return TurnstileInfo(*rows[0]) if rows else None

    return _turnstiles.get((organisation_id, code), load, cached_only=cached_only)


def ground_info(ground_id: int, *, cached_only: bool = False) -> GroundInfo:
    def load() -> GroundInfo:
        gates = dict(Gate.objects.filter(ground_id=ground_id).values_list("pk", "name"))
        served: dict[int, list[str]] = {}
        for block_id, gate_id in Gate.blocks.through.objects.filter(
            gate__ground_id=ground_id
        ).values_list("block_id", "gate_id"):
            served.setdefault(block_id, []).append(gates[gate_id])
        return GroundInfo(
            gate_names=gates,
            block_codes=dict(Block.objects.filter(ground_id=ground_id).values_list("pk", "code")),
            block_gates={block: tuple(sorted(names)) for block, names in served.items()},
            fixtures=tuple(
                Fixture.objects.filter(ground_id=ground_id).values_list("pk", "kickoff")
            ),
        )

    found = _grounds.get(ground_id, load, cached_only=cached_only)
    assert found is not None
    return found


def fixture_at(ground_id: int, moment: datetime, *, cached_only: bool = False) -> int | None:
    """The match at the ground whose kick-off is nearest `moment`, if `moment` falls between
    SAFEGROUND_ENTRY_OPENS_HOURS before that kick-off and SAFEGROUND_ENTRY_CLOSES_HOURS after."""
    opens = timedelta(hours=settings.SAFEGROUND_ENTRY_OPENS_HOURS)
    closes = timedelta(hours=settings.SAFEGROUND_ENTRY_CLOSES_HOURS)
    candidates = [
        (abs(kickoff - moment), fixture_id)
        for fixture_id, kickoff in ground_info(ground_id, cached_only=cached_only).fixtures
        if kickoff - opens <= moment <= kickoff + closes
    ]
    return min(candidates)[1] if candidates else None


def gate_ends(fixture_id: int, gate_id: int, *, cached_only: bool = False) -> GateEnds:
    """Which ends (home, away) a gate lets in for a match: the uses of the match's zones that hold
    a block the gate serves. A gate serving only buffer blocks lets no one in."""

    def load() -> GateEnds:
        uses = dict(
            FixtureZone.objects.filter(
                fixture_id=fixture_id, use__in=[FixtureZone.Use.HOME, FixtureZone.Use.AWAY]
            ).values_list("zone_id", "use")
        )
        blocks = set(Gate.blocks.through.objects.filter(gate_id=gate_id).values_list("block_id"))
        ends = {
            uses[zone_id]
            for zone_id, block_id in ZoneBlock.objects.filter(zone_id__in=uses).values_list(
                "zone_id", "block_id"
            )
            if (block_id,) in blocks
        }
        kickoff, reentry = Fixture.objects.values_list("kickoff", "reentry").get(pk=fixture_id)
        return GateEnds(
            home=FixtureZone.Use.HOME in ends,
            away=FixtureZone.Use.AWAY in ends,
            day=timezone.localdate(kickoff),
            reentry=reentry,
        )

    found = _gate_ends.get((fixture_id, gate_id), load, cached_only=cached_only)
    assert found is not None
    return found


def caches_warm(now: datetime | None = None) -> int:
    """Fill the caches for the matches whose gates are open now, before a process takes its
    first scan (entry.runtime.warm): every live device key, every turnstile that is the only one
    with its code at its organisation's grounds, and the grounds and gate ends of those matches.
    Without it a restarted process sent its first scans for each key, turnstile and match to the
    scan threads at once, each loading the same rows. Returns the entries loaded."""
    now = now or timezone.now()
    loaded = 0
    for key_hash, pk, organisation_id, name, profile in Device.objects.filter(
        revoked_at__isnull=True
    ).values_list("key_hash", "pk", "organisation_id", "name", "profile")[: MAX_ENTRIES // 2]:
        label = Device.Profile(profile).label if profile in Device.Profile.values else profile
        _devices.put(key_hash, DeviceInfo(pk, organisation_id, name, profile, str(label)))
        loaded += 1
    opens = timedelta(hours=settings.SAFEGROUND_ENTRY_OPENS_HOURS)
    closes = timedelta(hours=settings.SAFEGROUND_ENTRY_CLOSES_HOURS)
    open_now = list(
        Fixture.objects.filter(kickoff__gte=now - closes, kickoff__lte=now + opens).values_list(
            "pk", "ground_id", "ground__organisation_id"
        )
    )
    grounds = {ground_id: organisation_id for _, ground_id, organisation_id in open_now}
    rows = Turnstile.objects.filter(gate__ground_id__in=grounds).values_list(
        "pk", "code", "gate_id", "gate__name", "gate__ground_id"
    )
    by_code: dict[tuple[int, str], list[TurnstileInfo]] = {}
    for row in rows:
        info = TurnstileInfo(*row)
        by_code.setdefault((grounds[info.ground_id], info.code), []).append(info)
    for key, found in by_code.items():
        if len(found) == 1:  # an ambiguous code is refused by turnstile_for, as it is
            _turnstiles.put(key, found[0])
            loaded += 1
    for ground_id in grounds:
        ground_info(ground_id)
        loaded += 1
    for fixture_id, ground_id, _ in open_now:
        for gate_id in Gate.objects.filter(ground_id=ground_id).values_list("pk", flat=True):
            gate_ends(fixture_id, gate_id)
            loaded += 1
    return loaded
