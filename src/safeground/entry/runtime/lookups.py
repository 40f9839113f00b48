"""What a scan needs to know besides the ticket, kept a few seconds in each process.

A turnstile sends thousands of scans a minute with the same key, at the same turnstile, for the
same match: reading the device, the turnstile, the match and which ends its gate serves from the
database every time would cost four round trips per scan. Each is kept here (safeground.kept) for
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

from dataclasses import dataclass
from datetime import date, datetime

from django.utils import timezone

from safeground.accounts.models import Device
from safeground.accounts.services import device_key_hash
from safeground.kept import Kept
from safeground.kept import NotCached as NotCached  # the loop and the scan routes catch it here
from safeground.kept import reloads_due as reloads_due  # the loop asks for them here
from safeground.matches.models import Fixture, FixtureZone
from safeground.matches.selectors import fixtures_open, open_at
from safeground.venues.models import Block, Gate, Ground, Turnstile, ZoneBlock
from safeground.venues.ticket_format import TicketFormat, ticket_format

CACHE_SECONDS = "SAFEGROUND_ENTRY_CACHE_SECONDS"
MAX_ENTRIES = 10_000  # per cache; past it a cache starts again (keys are few in practice)


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
    ticket_format: TicketFormat  # a barcode that fits it but was never issued is forged


@dataclass(frozen=True)
class GateEnds:
    """For one match and one gate: the ends the gate lets in, the match day (for bans) and the
    match's re-entry rule."""

    home: bool
    away: bool
    day: date
    reentry: bool


_devices = Kept(CACHE_SECONDS, max_entries=MAX_ENTRIES)
_turnstiles = Kept(CACHE_SECONDS, max_entries=MAX_ENTRIES)
_grounds = Kept(CACHE_SECONDS, max_entries=MAX_ENTRIES)
_gate_ends = Kept(CACHE_SECONDS, max_entries=MAX_ENTRIES)


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
            ticket_format=_ticket_format(ground_id),
        )

    found = _grounds.get(ground_id, load, cached_only=cached_only)
    assert found is not None
    return found


def _ticket_format(ground_id: int) -> TicketFormat:
    code, prefix, length, check = Ground.objects.values_list(
        "code", "ticket_prefix", "ticket_length", "ticket_check"
    ).get(pk=ground_id)
    return ticket_format(ground_code=code, prefix=prefix, length=length, check=check)


def fixture_at(ground_id: int, moment: datetime, *, cached_only: bool = False) -> int | None:
    """The match on at the ground at `moment` (matches.selectors.open_at), from the kept
    kick-offs of its matches."""
    return open_at(ground_info(ground_id, cached_only=cached_only).fixtures, moment)


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
    open_now = list(fixtures_open(now).values_list("pk", "ground_id", "ground__organisation_id"))
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
