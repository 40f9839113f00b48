"""A gate warning into the control-room log (issue 41): written once when it starts, as a warning
entry at the gate naming its cause and figures in the Gates tab's words, heard by the same hook
as a flashpoint warning (incidents.hooks.warning_written); not again while it stands, whichever
process assesses; again when it comes back after it ended."""

import threading
from datetime import timedelta

import pytest
from django.db import connection

from safeground.entry import gate_pressure
from safeground.entry.models import GateWarned
from safeground.entry.services import gate_warnings_keep
from safeground.incidents import hooks as log_hooks
from safeground.incidents.models import LogEntry
from safeground.incidents.selectors import incident_fold, zone_map
from safeground.incidents.services import SYSTEM_AUTHOR
from tests.entry.test_gate_pressure import counts_clear

WAVE = (
    "Gate warning: Gate F (away): Forged ticket or Unknown ticket, 12 in the last 60 s"
    " (12 a minute against the gate's 0 a minute over the 10 minutes before)"
)


@pytest.fixture
def counted():
    counts_clear()
    yield gate_pressure.counts
    counts_clear()


def forged_wave(gates, at, n: int = 12) -> None:
    """`n` forged tickets counted at Gate F at `at`, as the turnstiles decided them."""
    gate_f = gates.fixture.ground.gates.get(code="F")
    turnstile = gate_f.turnstiles.order_by("code").first()
    for _ in range(n):
        gate_pressure.counts.count(
            fixture_id=gates.fixture.pk, ground_id=gates.fixture.ground_id, gate_id=gate_f.pk,
            turnstile_id=turnstile.pk, scanned_at=at, reason="forged",
        )  # fmt: skip


def warnings_logged(fixture) -> list[LogEntry]:
    return list(LogEntry.objects.filter(fixture=fixture, kind=LogEntry.Kind.WARNING))


@pytest.mark.django_db
def test_a_gate_warning_is_logged_once_at_its_onset_and_again_when_it_comes_back(
    gates, counted, django_capture_on_commit_callbacks
) -> None:
    heard: list[LogEntry] = []
    at = gates.before_kickoff
    forged_wave(gates, at)
    with log_hooks.warning_written.replaced(heard.append):
        with django_capture_on_commit_callbacks(execute=True):
            gate_pressure.gates_publish(gates.fixture.pk, now=at + timedelta(seconds=1))
        [warning] = warnings_logged(gates.fixture)
        assert heard == [warning]  # the hook the alerts and the CAP feed hear flashpoints by
        assert warning.text == WAVE
        assert (warning.gate.code, warning.zone_id, warning.severity) == ("F", None, 3)
        assert (warning.author_id, warning.author_name) == (None, SYSTEM_AUTHOR)
        assert warning.observed_at == at + timedelta(seconds=1)
        # It reads as a gate's warning in the log, not a flashpoint's.
        state = incident_fold(None, warning, zone_map(gates.fixture))
        assert (state.category, state.category_name) == ("gate", "Gate warning")
        assert state.zone_ids  # the zones the gate serves: the stewards there are alerted

        # Published again while it stands (the next round, or another process's: the kept
        # row, not this process's memory): not logged again.
        for seconds in (3, 5):
            with django_capture_on_commit_callbacks(execute=True):
                gate_pressure.gates_publish(gates.fixture.pk, now=at + timedelta(seconds=seconds))
        with django_capture_on_commit_callbacks(execute=True):
            gate_warnings_keep(
                fixture_id=gates.fixture.pk,
                warnings=[(warning.gate_id, GateWarned.objects.get().warning)],
                at=at + timedelta(seconds=6),
            )
        assert len(warnings_logged(gates.fixture)) == 1

        # The wave passes (its minute is over): the warning ends, nothing is logged.
        calm = at + timedelta(minutes=2)
        with django_capture_on_commit_callbacks(execute=True):
            gate_pressure.gates_publish(gates.fixture.pk, now=calm)
        assert not GateWarned.objects.get().standing
        assert len(warnings_logged(gates.fixture)) == 1

        # A second wave: a second onset, a second entry with its own figures.
        forged_wave(gates, calm, n=15)
        with django_capture_on_commit_callbacks(execute=True):
            gate_pressure.gates_publish(gates.fixture.pk, now=calm + timedelta(seconds=1))
    first, second = warnings_logged(gates.fixture)
    assert second.text.startswith("Gate warning: Gate F (away): Forged ticket or Unknown ticket,")
    assert "15 in the last 60 s" in second.text
    assert heard == [first, second]


@pytest.mark.django_db
def test_a_gate_warning_holds_back_no_flashpoint_warning_of_the_zones_it_serves(
    gates, counted, django_capture_on_commit_callbacks
) -> None:
    from safeground.incidents.flashpoint import warned_zone_ids

    at = gates.before_kickoff
    forged_wave(gates, at)
    with django_capture_on_commit_callbacks(execute=True):
        gate_pressure.gates_publish(gates.fixture.pk, now=at + timedelta(seconds=1))
    [warning] = warnings_logged(gates.fixture)
    served = incident_fold(None, warning, zone_map(gates.fixture)).zone_ids
    assert not set(served) & warned_zone_ids(gates.fixture, at, at + timedelta(minutes=1))


@pytest.mark.django_db(transaction=True)
def test_two_processes_telling_one_onset_at_once_log_it_once(gates, postgres_only) -> None:
    """Two server processes assessing the same round (a round claimed by each: a clock step),
    both seeing the warning start: one conditional write wins, one entry is logged."""
    gate_f = gates.fixture.ground.gates.get(code="F")
    warning = {
        "kind": "jump", "gate": "Gate F (away)", "reasons": ["forged", "unknown_ticket"],
        "turnstile": "", "figures": {
            "count": 12, "seconds": 60, "per_minute": 12.0, "before_per_minute": 0.0,
            "baseline_minutes": 10, "factor": 3.0,
        },
    }  # fmt: skip
    told: list[int] = []
    start = threading.Barrier(2)

    def process() -> None:
        try:
            start.wait()
            started = gate_warnings_keep(
                fixture_id=gates.fixture.pk, warnings=[(gate_f.pk, warning)],
                at=gates.before_kickoff,
            )  # fmt: skip
            told.append(len(started))
        finally:
            connection.close()

    threads = [threading.Thread(target=process) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(told) == [0, 1]
    assert len(warnings_logged(gates.fixture)) == 1
