"""Gate pressure's rules (entry.gate_pressure.gates_assess, issue 41): a jump against the gate's
own recent rate, a steady high rate that is not a jump, arrivals above the entry capacity for
several minutes, a silent turnstile among busy ones; and the counts kept as scans are decided,
an offline upload counted in its own times."""

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


@pytest.fixture
def counted(settings):
    gate_pressure.counts.clear()
    yield gate_pressure.counts
    gate_pressure.counts.clear()


@pytest.mark.django_db
def test_scans_are_counted_at_their_gate_and_an_offline_upload_in_its_own_times(
    gates, counted, django_capture_on_commit_callbacks
) -> None:
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
    _ground, kept = counted.snapshot(gates.fixture.pk, 0)
    by_bucket: dict[tuple[int, str], int] = {}
    for (_gate, _t, bucket, reason), n in kept.items():
        by_bucket[bucket, reason] = by_bucket.get((bucket, reason), 0) + n
    recent = int(now.timestamp()) // BUCKET_SECONDS
    old = int(long_ago.timestamp()) // BUCKET_SECONDS
    assert by_bucket == {
        (recent, ""): 1,
        (recent, "unknown_ticket"): 1,
        (old, "unknown_ticket"): 20,
    }
    # Twenty denials twenty minutes ago are the gate's past, not a jump now.
    data = gate_pressure.gates_figures(gates.fixture.pk, now=now + timedelta(seconds=1))
    assert data is not None and not data["warnings"]
    gate_f = next(g for g in data["gates"] if g["gate"] == "Gate F (away)")
    assert gate_f["denied"] == {"unknown_ticket": 1}
