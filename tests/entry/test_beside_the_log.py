"""A scan is never held up by the control room's log: while a report holds its match's chain
(incidents.chain_lock.log_chain_lock, for the whole append), a scan of that match is decided at
once. The scan stores a row naming the match, and that foreign key takes a KEY SHARE lock on the
match's row: the chain's lock must not conflict with it (FOR NO KEY UPDATE, or a lock of its
own). With FOR UPDATE every scan of the match waited for each report in turn, and at 20 reports/s
half the scans went past their 2 s deadline (bench_faults: 54% decided offline)."""

import threading
import uuid
from datetime import timedelta

import pytest
from django.db import OperationalError, connection, connections, transaction

from safeground.entry.runtime import lookups
from safeground.entry.scans import scan_decide
from safeground.incidents.chain_lock import log_chain_lock

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def test_a_scan_is_decided_while_a_report_holds_the_matchs_chain(gates, postgres_only) -> None:
    holding, release = threading.Event(), threading.Event()

    def report_in_progress() -> None:
        try:
            with transaction.atomic():
                log_chain_lock(gates.fixture)
                holding.set()
                release.wait(10)
        finally:
            connections.close_all()

    reporter = threading.Thread(target=report_in_progress)
    reporter.start()
    try:
        assert holding.wait(10)
        with connection.cursor() as cursor:
            cursor.execute("SET lock_timeout = '1s'")  # waiting on the chain: fail, not hang
        try:
            result = scan_decide(
                device=lookups.device_for_key(gates.key),  # type: ignore[arg-type]
                turnstile="F03",
                barcode="AWAY-1",
                scanned_at=gates.fixture.kickoff - timedelta(minutes=30),
                nonce=uuid.uuid4(),
            )
        except OperationalError as error:
            pytest.fail(f"the scan waited for the report's lock: {error}")
        finally:
            with connection.cursor() as cursor:
                cursor.execute("RESET lock_timeout")
        assert result.decision == "admit"
    finally:
        release.set()
        reporter.join()
