"""A small timing of the log's append path (not a benchmark: no peer, run by hand).

    .venv/bin/pytest -q -s tests/incidents/timing_log_append.py  (not collected by default)

Appends N reports to one match through incidents.services.log_entry_append, each committed
(transactional_db, as a request does), and prints the median and p95 per append. Used to show
that anchoring the chain (checkpoints, chained records) does not slow appends: run it before
and after a change, back to back, with the load average.
"""

import os
import statistics
import time

import pytest

from safeground.incidents.services import Place, log_entry_append
from tests import factories

N = int(os.environ.get("APPENDS", "400"))


@pytest.mark.django_db(transaction=True)
def test_time_log_append() -> None:
    day = factories.match_day()
    factories.categories()
    author = day.cast["loggist"]
    fixture = day.cup_tie
    times = []
    cpu = time.process_time()
    for i in range(N):
        start = time.perf_counter()
        log_entry_append(
            fixture=fixture,
            author=author,
            category="missile",
            text=f"Coins thrown {i}",
            place=Place(block="S-L2"),
        )
        times.append(time.perf_counter() - start)
    cpu_ms = (time.process_time() - cpu) * 1000 / N  # this process's CPU: steadier under load
    times.sort()
    median = statistics.median(times) * 1000
    p95 = times[int(len(times) * 0.95)] * 1000
    load = os.getloadavg()[0]
    print(
        f"\nlog append n={N} median_ms={median:.2f} p95_ms={p95:.2f} cpu_ms={cpu_ms:.2f}"
        f" load={load:.2f}"
    )
