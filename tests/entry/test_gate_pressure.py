"""Gate pressure's rules (entry.gate_pressure.gates_assess, issue 41): a jump against the gate's
own recent rate, a steady high rate that is not a jump, arrivals above the entry capacity for
several minutes, a silent turnstile among busy ones; and the counts kept as scans are decided,
an offline upload counted in its own times."""

import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from safeground.entry import gate_pressure
from safeground.entry.gate_pressure import BUCKET_SECONDS, Key, gates_assess
from safeground.matches.policy import GatePolicy
from safeground.venues.capacity import GateEntry

POLICY = GatePolicy()  # the shipped policy's figures (default.yaml says the same)
NOW = datetime(2026, 12, 5, 14, 30, tzinfo=UTC).timestamp()
GATE_A = GateEntry(1, "Gate A", {11: "A01", 12: "A02", 13: "A03", 14: "A04"}, 4 * 660 / 60)
GATE_F = GateEntry(2, "Gate F", {21: "F01", 22: "F02"}, 2 * 660 / 60)
GATES = {1: GATE_A, 2: GATE_F}


class Scans:
    """Counts as the scans would leave them: `add(gate, turnstile, seconds_ago, reason, n)`."""

    def __init__(self) -> None:
        self.counts: dict[Key, int] = {}

    def add(self, gate: int, turnstile: int, ago: float, reason: str = "", n: int = 1) -> None:
        key = (gate, turnstile, int(NOW - ago) // BUCKET_SECONDS, reason)
        self.counts[key] = self.counts.get(key, 0) + n

    def steady(self, gate: int, turnstiles, per_minute: float, minutes: int, reason: str = ""):
        """`per_minute` scans a minute on each turnstile, spread over the last `minutes`."""
        for t in turnstiles:
            for i in range(int(per_minute * minutes)):
                self.add(gate, t, (i + 0.5) * 60 / per_minute, reason)

    def assess(self, policy: GatePolicy = POLICY):
        return gates_assess(self.counts, GATES, NOW, policy)


def kinds(warnings) -> list[tuple[str, str]]:
    return [(w.kind, w.gate) for w in warnings]


def test_a_forged_ticket_wave_jumps_against_the_gates_own_rate() -> None:
    scans = Scans()
    scans.steady(1, [11, 12, 13, 14], per_minute=5, minutes=12)
    scans.steady(1, [11], per_minute=0.5, minutes=12, reason="unknown_ticket")  # the usual few
    for i in range(15):  # a wave: 15 forged tickets in the last 30 seconds
        scans.add(1, 12 + i % 2, 2 * i, "forged")
    figures, warnings = scans.assess()
    assert kinds(warnings) == [("jump", "Gate A")]
    (jump,) = warnings
    assert jump.reasons == ("forged", "unknown_ticket")
    assert jump.figures["count"] >= 15
    assert jump.figures["before_per_minute"] == pytest.approx(0.5, abs=0.1)
    assert figures[0].denied["forged"] == 15
    assert not [w for w in warnings if w.gate == "Gate F"]


def test_a_steady_high_rate_of_denials_is_not_a_jump() -> None:
    scans = Scans()
    scans.steady(1, [11, 12], per_minute=20, minutes=12, reason="unknown_ticket")
    figures, warnings = scans.assess()
    assert figures[0].denied["unknown_ticket"] >= 40  # many in the last minute...
    assert not [w for w in warnings if w.kind == "jump"]  # ...as many as before: no jump


def test_re_scans_jump_on_their_own() -> None:
    scans = Scans()
    scans.steady(2, [21, 22], per_minute=6, minutes=12)
    scans.add(2, 21, 10, "already_inside", 12)  # tailgating: a ticket passed back, re-scanned
    _, warnings = scans.assess()
    assert [(w.kind, w.gate, w.reasons) for w in warnings] == [
        ("jump", "Gate F", ("already_inside",))
    ]


def test_a_few_denials_are_never_a_jump_however_quiet_before() -> None:
    scans = Scans()
    scans.add(2, 21, 10, "forged", POLICY.jump_at_least - 1)
    assert not scans.assess()[1]


def test_arrivals_above_capacity_for_several_minutes_warn() -> None:
    scans = Scans()
    # Gate F: 2 turnstiles x 660/h = 22 a minute; 30 a minute arrive for 4 minutes.
    scans.steady(2, [21, 22], per_minute=15, minutes=4)
    figures, warnings = scans.assess()
    assert kinds(warnings) == [("capacity", "Gate F")]
    assert warnings[0].figures["capacity_per_minute"] == 22.0
    assert warnings[0].figures["arrivals_per_minute"] == pytest.approx(30, abs=1)
    gate_f = next(f for f in figures if f.gate == "Gate F")
    assert gate_f.queue >= 3 * 8  # ~8 people a minute beyond capacity, carried forward
    assert gate_f.queue_minutes == pytest.approx(gate_f.queue / 22, abs=0.1)


def test_a_minute_above_capacity_is_not_several() -> None:
    scans = Scans()
    scans.steady(2, [21, 22], per_minute=8, minutes=3)  # 16 a minute: under 22
    scans.add(2, 21, 20, "", 30)  # one busy last minute
    assert not [w for w in scans.assess()[1] if w.kind == "capacity"]


def test_a_silent_turnstile_among_busy_ones_warns() -> None:
    scans = Scans()
    scans.steady(1, [11, 12, 13], per_minute=8, minutes=5)
    for i in range(30):  # A04 scanned until two minutes ago, then nothing
        scans.add(1, 14, 130 + 5 * i)
    figures, warnings = scans.assess()
    assert [(w.kind, w.turnstile) for w in warnings] == [("silent", "A04")]
    assert warnings[0].figures["others_per_minute"] == pytest.approx(8, abs=1)
    a04 = next(t for t in figures[0].turnstiles if t["code"] == "A04")
    assert a04 == {"code": "A04", "per_minute": 0.0, "silent": True}


def test_a_quiet_gate_has_no_silent_turnstile() -> None:
    scans = Scans()
    scans.steady(1, [11, 12, 13], per_minute=1, minutes=5)  # a trickle: not busy
    for i in range(5):
        scans.add(1, 14, 130 + 5 * i)
    assert not scans.assess()[1]


def test_the_policy_files_gates_section_is_read_and_checked() -> None:
    from safeground.matches.policy import PolicyFileError, policy_current, policy_parse

    assert policy_current().gates == POLICY
    text = Path(policy_current().path).read_text()
    bad = text.replace("- [already_inside]", "- [tailgating]")
    with pytest.raises(PolicyFileError) as refused:
        policy_parse(text=bad, filename="policy.yaml")
    assert "gates.jump.reasons[1]: unknown scan reason 'tailgating'" in str(refused.value.errors)


# --- counted as scans are decided ----------------------------------------------------------------


def counts_clear() -> None:
    """No counts of an earlier test: the process's, and in Redis mode the matches' shared ones
    (a test database gives its ids again)."""
    from django.conf import settings

    gate_pressure.counts.clear()
    if settings.REDIS_URL:
        from safeground.live.transport import redis_client

        client = redis_client(settings.REDIS_URL)
        for key in client.scan_iter("safeground:gate-counts:*"):
            client.delete(key)


@pytest.fixture
def counted():
    counts_clear()
    yield gate_pressure.counts
    counts_clear()


@pytest.mark.django_db
def test_scans_are_counted_at_their_gate_and_an_offline_upload_in_its_own_times(
    gates, counted
) -> None:
    """Online scans in the gate's last minute; twenty offline denials twenty minutes ago, uploaded
    now, are a jump in the minute they happened and the gate's past now (on SQLite from the
    process's counts, with Redis from the shared ones)."""
    from tests.entry.test_offline import scan, upload

    now = gates.before_kickoff
    gates.scan("AWAY-1", at=now)
    gates.scan("NOPE-1", at=now)
    gates.scan("AWAY-1", at=now, direction="out")  # an exit is not an arrival
    long_ago = now - timedelta(minutes=20)
    upload(
        gates.key,
        *(scan(f"NOPE-{i}", long_ago, decision="deny", reason="unknown_ticket") for i in range(20)),
    )

    def gate_f(at):
        data = gate_pressure.gates_figures(gates.fixture.pk, now=at)
        assert data is not None
        gate = next(g for g in data["gates"] if g["gate"] == "Gate F (away)")
        return gate, data["warnings"]

    then, warnings = gate_f(long_ago + timedelta(seconds=1))
    assert then["denied"] == {"unknown_ticket": 20}
    assert [(w["kind"], w["gate"]) for w in warnings] == [("jump", "Gate F (away)")]
    time.sleep(0.01)  # Redis mode: the next round is another (SAFEGROUND_GATE_PRESSURE_EVERY 0)
    latest, warnings = gate_f(now + timedelta(seconds=1))
    assert latest["denied"] == {"unknown_ticket": 1}
    assert latest["arrivals_per_minute"] == 2  # the admission and the unknown; not the exit
    assert not warnings


@pytest.mark.django_db
def test_with_redis_two_processes_counts_make_one_picture(gates, counted, monkeypatch, settings):
    """Each server process adds its own counts to the match's in Redis at its round; the one that
    assesses sees both: six forged tickets in each process are twelve, a jump; one round a time."""
    if not settings.REDIS_URL:
        pytest.skip("shared counts need Redis: set REDIS_URL=redis://... to run it")
    at = gates.before_kickoff
    place = {"fixture_id": gates.fixture.pk, "ground_id": gates.fixture.ground_id}
    gate_f = gates.fixture.ground.gates.get(code="F")
    turnstile = gate_f.turnstiles.order_by("code").first()

    def six_forged() -> None:
        for _ in range(6):
            gate_pressure.counts.count(
                **place, gate_id=gate_f.pk, turnstile_id=turnstile.pk, scanned_at=at,
                reason="forged",
            )  # fmt: skip

    six_forged()
    first = gate_pressure.gates_figures(gates.fixture.pk, now=at + timedelta(seconds=1))
    assert first is not None and not first["warnings"]  # six: under the policy's ten
    monkeypatch.setattr(gate_pressure, "counts", gate_pressure.GateCounts())  # another process
    six_forged()
    settings.SAFEGROUND_GATE_PRESSURE_EVERY = 60  # this round is the second process's
    second = gate_pressure.gates_figures(gates.fixture.pk, now=at + timedelta(seconds=2))
    assert second is not None
    assert [(w["kind"], w["figures"]["count"]) for w in second["warnings"]] == [("jump", 12)]
    # A third process's round within it only adds its share: the second assesses this round.
    monkeypatch.setattr(gate_pressure, "counts", gate_pressure.GateCounts())
    six_forged()
    assert gate_pressure.gates_figures(gates.fixture.pk, now=at + timedelta(seconds=3)) is None
