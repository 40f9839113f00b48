"""Writers appending at once land in one unbroken chain (no fork, no gap): 20 on PostgreSQL;
on SQLite, threads of one process queueing for its one writer."""

import threading

import pytest
from django.db import connection, connections

from safeground.accounts.models import User
from safeground.incidents.models import LogEntry
from safeground.incidents.services import Place, log_entry_append
from safeground.incidents.verify import chain_verify

pytestmark = pytest.mark.django_db(transaction=True)

WRITERS = 20
EACH = 50


def test_twenty_concurrent_writers_make_one_chain(match_day) -> None:
    if connection.vendor != "postgresql":
        pytest.skip("concurrency tests run on PostgreSQL only (set DATABASE_URL)")
    # More writers than the pool has connections (16): what is tested is the chain, not the
    # pool's one-second wait for a connection, which a loaded test machine can overrun.
    pool = connection.pool
    wait, pool.timeout = pool.timeout, 30.0
    try:
        write_at_once(match_day.cup_tie, WRITERS, EACH)
    finally:
        pool.timeout = wait


def test_concurrent_writers_on_sqlite_queue_and_make_one_chain(match_day) -> None:
    if connection.vendor != "sqlite":
        pytest.skip("SQLite's writer queue (PostgreSQL has the twenty-writer test)")
    write_at_once(match_day.cup_tie, 6, 8)


def write_at_once(cup_tie, writers: int, each: int) -> None:
    author = User.objects.get(username="loggist")
    start = threading.Barrier(writers)
    errors: list[BaseException] = []

    def writer(n: int) -> None:
        try:
            start.wait()
            for i in range(each):
                log_entry_append(
                    fixture=cup_tie,
                    author=author,
                    category="missile",
                    text=f"writer {n} entry {i}",
                    place=Place(block="S-L1"),
                    idempotency_key=f"w{n}-{i}",
                )
                connections.close_all()  # back to the pool, as at the end of a request
        except BaseException as exc:  # surfaced below, not swallowed
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    log = LogEntry.objects.filter(fixture=cup_tie)
    seqs = list(log.order_by("seq").values_list("seq", flat=True))
    # Every report once, plus the flashpoint warnings they raised, in one gapless sequence.
    assert log.filter(kind="report").count() == writers * each
    assert seqs == list(range(1, len(seqs) + 1))
    count, broken = chain_verify(cup_tie.pk)
    assert (count, broken) == (len(seqs), None)
