"""The one hook mechanism (safeground.hooks, docs/adr/0017-one-hook-mechanism.md)."""

from collections.abc import Callable, Iterator

import pytest
from django.db import transaction

from safeground import hooks
from safeground.accounts.models import Organisation
from safeground.accounts.services import organisation_create
from safeground.hooks import Kind, Timing, UnknownKind, ignored, total

# Every registered hook: its kind, when it runs, and its place in the order. Adding, moving or
# removing a hook, or declaring a kind, changes this listing on purpose.
EXPECTED = """\
accounts.device_revoked (after commit) 1: safeground.entry.runtime.lookups.device_forget
bans.ban_changed (in the transaction) 1: safeground.exchange.publishing.ban_changed
bans.ban_in_force (in the transaction) 1: safeground.entry.flagging.ban_in_force
bans.ban_revoked (in the transaction) 1: safeground.entry.services.flags_clear_revoked
bans.flags_awaiting (at render) 1: safeground.entry.selectors.flags_awaiting
bans.grounds_sources (at render) 1: safeground.casework.selectors.ban_grounds_sources
decisions.decision_recorded (after commit) 1: safeground.partners.services.kickoff_told
decisions.methane_reported (after commit) 1: safeground.alerts.services.alert_major_incident
decisions.methane_reported (after commit) 2: safeground.partners.services.methane_told
entry.gate_warned (after commit) 1: safeground.decisions.gate_warnings.gate_warning_log
entry.tickets_arrived (after commit) 1: safeground.exchange.check_runs.tickets_arrived
incidents.broadcast_sent (after commit) 1: safeground.alerts.services.alert_broadcast
incidents.broadcast_sent (after commit) 2: safeground.partners.services.broadcast_told
incidents.control_room_banners (at render) 1: safeground.decisions.views.control_room_banner_for
incidents.control_room_map_panels (at render) 1: safeground.supporters.triage_views.control_room_panel_for
incidents.control_room_panels (at render) 1: safeground.deployment.views.control_room_panel_for
incidents.control_room_panels (at render) 2: safeground.decisions.closure_views.stands_panel_for
incidents.control_room_panels (at render) 3: safeground.decisions.closure_views.stands_alarm_for
incidents.control_room_panels (at render) 4: safeground.alerts.views.control_room_panel_for
incidents.control_room_panels (at render) 5: safeground.alerts.views.control_room_alarm_for
incidents.incident_dealt_with (after commit) 1: safeground.supporters.services.reporters_tell_dealt_with
incidents.steward_banners (at render) 1: safeground.decisions.views.steward_banner_for
incidents.steward_panels (at render) 1: safeground.deployment.views.steward_panel_for
incidents.steward_panels (at render) 2: safeground.alerts.views.steward_panel_for
incidents.task_given (after commit) 1: safeground.alerts.services.alert_task
incidents.warning_written (after commit) 1: safeground.alerts.services.alert_warning
incidents.warning_written (after commit) 2: safeground.partners.services.warning_told
live.catch_up_sources (at render) 1: safeground.incidents.catch_up.live_catch_up
live.viewer_zones (at render) 1: safeground.incidents.selectors.viewer_zone_ids
matches.fixture_panels (at render) 1: safeground.partners.views.fixture_panel_for
matches.fixture_panels (at render) 2: safeground.exchange.views.fixture_panel_for
matches.history_sources (at render) 1: safeground.incidents.risk_history.log_history
matches.history_sources (at render) 2: safeground.entry.risk_history.banned_denials
venues.ground_panels (at render) 1: safeground.supporters.sheet_views.ground_panel_for
"""  # noqa: E501


def test_every_registered_hook_with_its_timing_and_order() -> None:
    listing = "".join(f"{row}\n" for row in hooks.listing())
    print(listing)
    assert listing == EXPECTED
    # Every declared kind has a hook: a kind nobody registers with is dead.
    assert sorted({row.kind for row in hooks.listing()}) == hooks.declared()


def test_a_second_ready_adds_no_hook() -> None:
    from django.apps import apps

    registering = {apps.get_containing_app_config(row.hook) for row in hooks.listing()}
    for config in registering:
        assert config is not None
        config.ready()
    assert "".join(f"{row}\n" for row in hooks.listing()) == EXPECTED


@pytest.fixture
def own_kinds(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Kinds declared by a test stay out of the installation's listing."""
    monkeypatch.setattr(hooks, "_kinds", {})
    yield


def ran(name: str, calls: list[str]) -> Callable[[str], int]:
    def hook(subject: str) -> int:
        calls.append(f"{name}:{subject}")
        return len(subject)

    hook.__qualname__ = name  # its registration id
    return hook


def test_registering_with_an_undeclared_kind_is_refused(own_kinds: None) -> None:
    stray: Kind[[str], int, int] = Kind("tests.stray", Timing.AT_RENDER, total, declare=False)
    with pytest.raises(UnknownKind, match=r"tests\.stray"):
        stray.register(ran("a", []))
    assert hooks.listing() == []


def test_a_kind_is_declared_once(own_kinds: None) -> None:
    Kind("tests.once", Timing.AT_RENDER, total)
    with pytest.raises(ValueError, match="declared twice"):
        Kind("tests.once", Timing.AT_RENDER, total)


def test_an_after_commit_kind_cannot_promise_an_answer(own_kinds: None) -> None:
    with pytest.raises(ValueError, match="never read"):
        Kind("tests.answer", Timing.AFTER_COMMIT, total)


def test_hooks_run_in_registration_order_and_their_answers_combine(own_kinds: None) -> None:
    calls: list[str] = []
    counted: Kind[[str], int, int] = Kind("tests.counted", Timing.AT_RENDER, total)
    first, second = ran("first", calls), ran("second", calls)
    counted.register(first)
    counted.register(second)
    counted.register(first)  # a second ready(): keeps its place, runs once
    assert counted("abc") == 6
    assert calls == ["first:abc", "second:abc"]
    assert [str(row) for row in hooks.listing()] == [
        "tests.counted (at render) 1: tests.test_hooks.first",
        "tests.counted (at render) 2: tests.test_hooks.second",
    ]


@pytest.mark.django_db(transaction=True)
def test_after_commit_runs_once_on_commit_and_never_after_a_rollback(own_kinds: None) -> None:
    calls: list[str] = []
    committed: Kind[[str], object, None] = Kind("tests.committed", Timing.AFTER_COMMIT, ignored)
    committed.register(ran("heard", calls))

    with pytest.raises(RuntimeError), transaction.atomic():
        committed("rolled back")
        raise RuntimeError
    assert calls == []

    with transaction.atomic():
        committed("kept")
        assert calls == []  # not before the commit
    assert calls == ["heard:kept"]

    with transaction.atomic():
        with pytest.raises(RuntimeError), transaction.atomic():  # a savepoint
            committed("inner")
            raise RuntimeError
        committed("outer")
    assert calls == ["heard:kept", "heard:outer"]


@pytest.mark.django_db(transaction=True)
def test_an_after_commit_hook_that_fails_does_not_fail_the_write(own_kinds: None) -> None:
    calls: list[str] = []
    committed: Kind[[str], object, None] = Kind("tests.robust", Timing.AFTER_COMMIT, ignored)

    def broken(subject: str) -> None:
        raise OSError("the phone company is down")

    committed.register(broken)
    committed.register(ran("after", calls))
    with transaction.atomic():
        organisation_create(name="Watford", kind=Organisation.Kind.CLUB)
        committed("x")
    assert Organisation.objects.filter(name="Watford").exists()
    assert calls == ["after:x"]


@pytest.mark.django_db(transaction=True)
def test_in_transaction_hooks_write_with_the_caller(own_kinds: None) -> None:
    inside: Kind[[str], None, None] = Kind("tests.inside", Timing.IN_TRANSACTION, ignored)

    def club_added(name: str) -> None:
        organisation_create(name=name, kind=Organisation.Kind.CLUB)

    inside.register(club_added)
    with pytest.raises(RuntimeError, match="no"), transaction.atomic():
        inside("Luton Town")
        assert Organisation.objects.filter(name="Luton Town").exists()
        raise RuntimeError("no")
    assert not Organisation.objects.filter(name="Luton Town").exists()  # rolled back with it

    with transaction.atomic():
        inside("Watford")
    assert Organisation.objects.filter(name="Watford").exists()

    with pytest.raises(RuntimeError, match="none is open"):
        inside("Stevenage")  # no transaction: refused, nothing written
    assert not Organisation.objects.filter(name="Stevenage").exists()


@pytest.mark.django_db(transaction=True)
def test_after_commit_once_runs_once_per_committed_transaction() -> None:
    runs: list[str] = []

    def publish() -> None:
        runs.append("published")

    with transaction.atomic():
        for _ in range(3):  # the roll-forward changing three bans
            hooks.after_commit_once(publish)
        assert runs == []
    assert runs == ["published"]

    with pytest.raises(RuntimeError), transaction.atomic():
        hooks.after_commit_once(publish)
        raise RuntimeError
    assert runs == ["published"]  # rolled back: nothing

    with transaction.atomic():
        pass  # a transaction that asks nothing does not run the one left behind
    assert runs == ["published"]

    with transaction.atomic(), pytest.raises(RuntimeError), transaction.atomic():
        hooks.after_commit_once(publish)
        raise RuntimeError
    assert runs == ["published"]  # asked only in a savepoint rolled back

    with transaction.atomic():
        hooks.after_commit_once(publish)
        hooks.after_commit_once(publish)
    assert runs == ["published", "published"]


@pytest.mark.django_db(transaction=True)
def test_after_commit_once_failing_does_not_fail_the_committed_write() -> None:
    """The exchange's publication marked pending (before: not robust, so a failure there
    answered an error for a ban change that had committed)."""

    def broken() -> None:
        raise OSError("the database blinked")

    with transaction.atomic():
        organisation_create(name="Watford", kind=Organisation.Kind.CLUB)
        hooks.after_commit_once(broken)
    assert Organisation.objects.filter(name="Watford").exists()
