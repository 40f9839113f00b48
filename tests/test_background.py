"""Background work, one way (safeground.background, docs/adr/0018): the executor and its one
settle(), the one scheduler, a database outage as two lines per job, and no other thread."""

import ast
import logging
import socket
import threading
import time
from pathlib import Path

import pytest
from django.db import connection

from safeground import background
from safeground.background import Background, Job
from safeground.matches.models import Fixture

SOURCE = Path(background.__file__).resolve().parent


def test_settle_waits_for_work_submitted_and_work_on_the_clock() -> None:
    done: list[str] = []
    release = threading.Event()
    background.submit(lambda: (release.wait(5), done.append("now")), name="test: now")
    background.later(0.2, lambda: done.append("later"), name="test: later")
    assert background.settle(0.05) is False  # both still to do
    release.set()
    assert background.settle(5)
    assert sorted(done) == ["later", "now"]


def test_a_probe_not_waited_for_is_waited_for_only_while_it_runs() -> None:
    ran = threading.Event()
    release = threading.Event()

    def probe() -> None:
        ran.set()
        release.wait(5)

    background.later(0.3, probe, name="test: probe", waited_for=False)
    assert background.settle(0.1)  # an outage's next probe does not hold an exit up
    assert ran.wait(5)
    assert background.settle(0.1) is False  # running: waited for
    release.set()
    assert background.settle(5)


def test_work_runs_on_the_named_background_threads_and_a_failure_is_logged(caplog) -> None:
    seen: list[str] = []

    def fails() -> None:
        raise ValueError("bad batch")

    background.submit(fails, name="test: failing")
    background.submit(lambda: seen.append(threading.current_thread().name), name="test: next")
    assert background.settle(5)
    assert seen and seen[0].startswith("safeground-background-")  # the thread lived on
    [failed] = [r for r in caplog.records if r.name == "safeground.background"]
    assert failed.getMessage() == "background work test: failing failed" and failed.exc_info


def test_shutdown_lets_the_work_end_then_stops_the_threads() -> None:
    own = Background(threads=2)
    done: list[int] = []
    own.later(0.1, lambda: done.append(1), name="test: last")
    assert own.shutdown(5)
    assert done == [1]
    assert not [t for t in own._workers if t.is_alive()]


def test_the_scheduler_runs_a_job_every_period_never_two_at_once_until_halted() -> None:
    runs: list[float] = []
    running = threading.Lock()
    overlapped: list[bool] = []

    def slow() -> None:
        overlapped.append(not running.acquire(blocking=False))
        runs.append(time.monotonic())
        time.sleep(0.12)  # longer than the period: the next due is skipped, not piled up
        running.release()

    started = time.monotonic()
    halt = background.schedule_start([Job("test: slow", 0.05, slow)])
    deadline = started + 10
    while len(runs) < 3:
        assert time.monotonic() < deadline, "the job did not run three times"
        time.sleep(0.02)
    halt()
    after = len(runs)
    time.sleep(0.3)
    assert len(runs) == after  # halted
    assert runs[0] - started >= 0.05  # first after one period
    assert not any(overlapped)


@pytest.fixture
def database_away(transactional_db, monkeypatch, tmp_path):
    """New connections fail for real until `back()`: on SQLite the file is somewhere that does
    not exist; on PostgreSQL the address is a port nobody listens on (the pool waits 1 s)."""
    settings_dict = connection.settings_dict
    if connection.vendor == "sqlite":
        away = {"NAME": str(tmp_path / "gone" / "db.sqlite3")}
    else:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            closed_port = probe.getsockname()[1]  # closed again on leaving
        away = {"HOST": "127.0.0.1", "PORT": str(closed_port)}
        pool = dict(settings_dict["OPTIONS"]["pool"], timeout=1.0)
        monkeypatch.setitem(settings_dict["OPTIONS"], "pool", pool)
    kept = {key: settings_dict[key] for key in away}

    def reconnect() -> None:
        connection.close()
        if hasattr(connection, "close_pool"):
            connection.close_pool()

    reconnect()
    settings_dict.update(away)

    def back() -> None:
        settings_dict.update(kept)
        reconnect()

    yield back
    back()


def test_a_database_outage_is_one_line_per_job_when_it_begins_and_one_when_it_ends(
    database_away, caplog
) -> None:
    caplog.set_level(logging.INFO, logger="safeground.background")
    outcomes: list[str] = []

    def count_fixtures() -> None:
        try:
            Fixture.objects.count()
        except Exception:
            outcomes.append("failed")
            raise
        outcomes.append("ran")

    job = Job("test: fixtures counted", 0.05, count_fixtures)
    halt = background.schedule_start([job])
    try:
        deadline = time.monotonic() + 20
        while outcomes.count("failed") < 4:  # several runs meet the outage
            assert time.monotonic() < deadline, outcomes
            time.sleep(0.02)
        database_away()
        while outcomes[-2:] != ["ran", "ran"]:  # back, and once more after that
            assert time.monotonic() < deadline, outcomes
            time.sleep(0.02)
    finally:
        halt()
    mine = [r for r in caplog.records if r.name == "safeground.background"]
    assert not [r for r in mine if r.exc_info], "no traceback while the database is away"
    lines = [(r.levelname, r.getMessage()) for r in mine]
    began = [line for line in lines if "does not answer" in line[1]]
    ended = [line for line in lines if "answers again" in line[1]]
    assert len(began) == 1 and began[0][0] == "WARNING", lines
    assert began[0][1].startswith("periodic job test: fixtures counted: the database")
    assert len(ended) == 1 and ended[0][0] == "INFO", lines
    assert len(lines) == 2, lines


def test_a_job_failing_for_another_reason_is_logged_with_its_traceback_every_run(caplog):
    def broken() -> None:
        raise KeyError("a bug, not an outage")

    job = Job("test: broken", 15, broken)
    job.run_logged()
    job.run_logged()
    mine = [r for r in caplog.records if r.name == "safeground.background"]
    assert len(mine) == 2 and all(r.exc_info for r in mine)
    assert mine[0].getMessage() == "periodic job test: broken failed; it runs again in 15 s"


# --- nothing else starts a thread ----------------------------------------------------------------

# What starts a thread: threading's Thread and Timer, a concurrent.futures pool, _thread, and
# asyncio's hand-offs to its own default pool.
STARTS_THREADS = {"Thread", "Timer", "ThreadPoolExecutor", "start_new_thread", "to_thread",
                  "run_in_executor"}  # fmt: skip
KNOWN = {
    "background.py": "the one owner of background threads",
    "entry/runtime/threads.py": "group commit, item 3: the scans' thread pool",
    "group_commit.py": "the one group commit's writer thread (its thread flavour, ADR 0019)",
    # A load replay command: its lanes are turnstiles side by side, joined before it returns,
    # as many as asked for; they are the load, not background work beside a request.
    "demo/arrival.py": "the arrival replay's turnstile lanes",
}


def _thread_starters(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        name = node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", None)
        if name in STARTS_THREADS:
            found.append(f"{name} at line {node.lineno}")  # type: ignore[attr-defined]
    return found


def test_no_module_but_background_starts_a_thread() -> None:
    starters = {
        path.relative_to(SOURCE).as_posix(): found
        for path in sorted(SOURCE.rglob("*.py"))
        if "migrations" not in path.parts and (found := _thread_starters(path))
    }
    unknown = {path: found for path, found in starters.items() if path not in KNOWN}
    assert not unknown, f"use safeground.background (submit, later, schedule_start): {unknown}"
    # Each exception is still needed: one gone from the code leaves the list too.
    assert set(KNOWN) == set(starters)
