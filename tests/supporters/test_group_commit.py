"""Reports written together: a batch of reports in a fixed number of statements, its bounds held
across the batch, and the group commit that gathers the reports arriving at the same moment."""

import threading
import time

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from safeground.supporters.abuse import TooManyReports
from safeground.supporters.group_commit import GroupCommit
from safeground.supporters.models import Reporter, SupporterReport, TriageItem
from safeground.supporters.seats import seat_code
from safeground.supporters.services import Sender, report_incoming, reports_write


def incoming(tonight, n: int, *, block="S-L1", category="abuse-racist", sender=None):
    return report_incoming(
        fixture=tonight.fixture,
        sender=sender or Sender("web", f"device-token-{n:04d}-abcdefghij", "10.0.0.1"),
        block=tonight.block(block),
        category=category,
        text=f"report {n}",
    )


@pytest.mark.django_db
def test_a_report_from_the_seat_page_costs_four_statements(tonight, settings) -> None:
    """The seat and the match on now are kept (SAFEGROUND_LOG_CACHE_SECONDS,
    SAFEGROUND_MATCH_ON_NOW_CACHE_SECONDS); the report is its
    reporter read with its and its address's bounds counted, its reporter made, its item counted
    up (or begun) and read back, its row written (queue_rows). One report a transaction cost
    eleven through the ORM, a batch six."""
    settings.SAFEGROUND_LOG_CACHE_SECONDS = 5
    settings.SAFEGROUND_MATCH_ON_NOW_CACHE_SECONDS = 5
    url = reverse("supporters_seat", args=[seat_code(tonight.block("S-L1"), "A", 1)])
    Client().post(url, {"category": "smoking"})  # the item is open, the seat and match kept
    with CaptureQueriesContext(connection) as statements:
        response = Client().post(url, {"category": "smoking"})
    assert response.status_code == 302
    written = [q["sql"] for q in statements.captured_queries if "SAVEPOINT" not in q["sql"]]
    assert len(written) <= 4, "\n".join(written)
    assert TriageItem.objects.get().count == 2


@pytest.mark.django_db
def test_a_batch_is_written_in_the_same_statements_however_many_reports(tonight) -> None:
    one = [incoming(tonight, 0)]
    many = [incoming(tonight, n) for n in range(1, 21)]
    many += [incoming(tonight, n, block="S-L2") for n in range(21, 31)]
    with CaptureQueriesContext(connection) as alone:
        reports_write(one)
    with CaptureQueriesContext(connection) as together:
        written = reports_write(many)
    # The second place's item is new: its quiet check and its INSERT are the two more.
    assert len(together.captured_queries) <= len(alone.captured_queries) + 3
    assert all(isinstance(r, SupporterReport) and r.pk for r in written)
    counts = dict(TriageItem.objects.values_list("block__code", "count"))
    assert counts == {"S-L1": 21, "S-L2": 10}
    assert Reporter.objects.count() == 31


@pytest.mark.django_db
def test_a_devices_bound_holds_within_one_batch(tonight, settings) -> None:
    settings.SAFEGROUND_LIMITS = {**settings.SAFEGROUND_LIMITS, "supporters.reporter": "3/10m"}
    same = Sender("web", "one-device-token-abcdefghijkl", "10.0.0.2")
    written = reports_write([incoming(tonight, n, sender=same) for n in range(5)])
    refused = [r for r in written if isinstance(r, TooManyReports)]
    assert len(refused) == 2 and refused[0].retry_after > 0
    assert SupporterReport.objects.count() == 3 and TriageItem.objects.get().count == 3


@pytest.mark.django_db
def test_texts_from_different_phones_are_not_one_network(tonight, settings) -> None:
    """A text has no network address: the bound is each phone's, not the whole line's."""
    settings.SAFEGROUND_LIMITS = {**settings.SAFEGROUND_LIMITS, "supporters.network": "2/10m"}
    phones = [Sender("sms", f"+4477009000{n:02d}") for n in range(4)]
    written = reports_write([incoming(tonight, n, sender=s) for n, s in enumerate(phones)])
    assert all(isinstance(r, SupporterReport) for r in written)


def gathered(write, jobs: list[int]) -> dict[int, object]:
    """Submits job 0, then the others while job 0 is being written; what each caller got."""
    first_started = threading.Event()

    def slow_first(batch: list[int]) -> list[int | Exception]:
        if not first_started.is_set():
            first_started.set()
            time.sleep(0.3)  # the others arrive meanwhile
        return write(batch)

    together = GroupCommit(slow_first)
    answers: dict[int, object] = {}

    def send(job: int) -> None:
        try:
            answers[job] = together.submit(job)
        except ValueError as error:
            answers[job] = error

    threads = [threading.Thread(target=send, args=(job,)) for job in [0, *jobs]]
    threads[0].start()
    first_started.wait()
    for thread in threads[1:]:
        thread.start()
    for thread in threads:
        thread.join()
    return answers


def test_jobs_arriving_while_one_is_written_go_together_in_the_next() -> None:
    batches: list[list[int]] = []

    def write(jobs: list[int]) -> list[int | Exception]:
        batches.append(jobs)
        return [job * 10 for job in jobs]

    answers = gathered(write, list(range(1, 9)))
    assert answers == {n: n * 10 for n in range(9)}
    assert batches[0] == [0] and sorted(batches[1]) == list(range(1, 9)) and len(batches) == 2


def test_a_batch_that_fails_is_written_again_one_by_one_and_only_the_bad_job_fails() -> None:
    def write(jobs: list[int]) -> list[int | Exception]:
        if 13 in jobs:
            raise ValueError("job 13 cannot be written")
        return [job + 1 for job in jobs]

    answers = gathered(write, [12, 13, 14])
    assert answers[12] == 13 and answers[14] == 15
    assert isinstance(answers[13], ValueError)


def test_a_refused_job_raises_to_its_caller_alone() -> None:
    together = GroupCommit(lambda jobs: [ValueError("no") if j < 0 else j for j in jobs])
    assert together.submit(1) == 1
    with pytest.raises(ValueError):
        together.submit(-1)
