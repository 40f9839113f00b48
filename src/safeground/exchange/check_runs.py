"""A fixture's league check in the background, with its progress (docs/adr/0015, fourth
Update): the first check of a fixture's 60,000 holders takes its seconds (every holder new to
the club's cache of tokens), so it is not waited for in a request. It runs on the process's
background threads (safeground.background, ADR 0018), its blinding in the worker processes as
any whole check; its progress is a row (LeagueCheckRun) the fixture's page polls.

And the ticket import's part: the holders of tickets just imported or changed are checked as
they arrive, only they: a few at once as at the point of sale, more as a background run."""

import logging
from datetime import datetime, timedelta
from functools import partial

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from safeground import background
from safeground.entry.models import Ticket
from safeground.errors import SafegroundError
from safeground.matches.models import Fixture

from . import checking, oprf
from .models import LeagueCheckRun

logger = logging.getLogger(__name__)

# A run that has shown no progress for this long was lost with its process (a restart): it is
# shown as interrupted, and a new one may start.
STALE = timedelta(minutes=5)
# Progress is written at most this often (a batch of 2,048 holders takes about a second).
PROGRESS_EVERY = timedelta(seconds=0.5)
# Who started a run the import began.
BY_IMPORT = "ticket import"


def _holders(fixture: Fixture, since: datetime | None) -> int:
    tickets = Ticket.objects.filter(
        fixture=fixture, status=Ticket.Status.VALID, holder_dob__isnull=False
    )
    return (tickets.filter(updated_at__gte=since) if since else tickets).count()


def league_check_start(
    *, fixture: Fixture, asked_by: str, since: datetime | None = None
) -> LeagueCheckRun:
    """Start checking the fixture's holders in the background (those of tickets imported or
    changed `since`, if given): the run the page shows. One runs at a time a fixture: while one
    is under way it is the answer; one that stopped progressing (its process gone) is closed as
    interrupted first."""
    now = timezone.now()
    with transaction.atomic():
        under_way = (
            LeagueCheckRun.objects.select_for_update()
            .filter(fixture=fixture, finished_at__isnull=True)
            .order_by("-started_at")
            .first()
        )
        if under_way is not None and under_way.progressed_at > now - STALE:
            return under_way
        if under_way is not None:
            _finish_failed(under_way.pk, "interrupted: its process stopped before it finished")
        run = LeagueCheckRun.objects.create(
            fixture=fixture, asked_by=asked_by, started_at=now, progressed_at=now,
            total=_holders(fixture, since),
        )  # fmt: skip
        transaction.on_commit(
            lambda: background.submit(
                partial(league_check_run, run_id=run.pk, since=since), name="league check"
            )
        )
    return run


def league_check_run(*, run_id: int, since: datetime | None = None) -> None:
    """The run itself (on a background thread): the check, its progress written as it goes,
    and its end: matched and flagged, or why it failed and how many holders it did not check."""
    run = LeagueCheckRun.objects.select_related("fixture__ground").get(pk=run_id)
    last = {"at": timezone.now() - PROGRESS_EVERY}

    def progress(done: int, total: int) -> None:
        now = timezone.now()
        if now - last["at"] >= PROGRESS_EVERY or done >= total:
            last["at"] = now
            LeagueCheckRun.objects.filter(pk=run_id).update(
                done=done, total=total, progressed_at=now
            )

    try:
        report = checking.league_check(fixture=run.fixture, progress=progress, since=since)
    except (SafegroundError, oprf.OprfRefused, RuntimeError) as failed:
        logger.warning("league check of fixture %s failed: %s", run.fixture_id, failed)
        _finish_failed(run_id, str(failed))
        return
    now = timezone.now()
    LeagueCheckRun.objects.filter(pk=run_id).update(
        done=report.holders, total=report.holders, finished_at=now, progressed_at=now,
        matched=report.matched, flagged=report.flagged,
    )  # fmt: skip


def _finish_failed(run_id: int, why: str) -> None:
    run = LeagueCheckRun.objects.get(pk=run_id)
    now = timezone.now()
    LeagueCheckRun.objects.filter(pk=run_id).update(
        finished_at=now, progressed_at=now, failures=max(0, run.total - run.done),
        failure=why[:300],
    )  # fmt: skip


def last_run(fixture: Fixture) -> LeagueCheckRun | None:
    return LeagueCheckRun.objects.filter(fixture=fixture).order_by("-started_at", "-pk").first()


def tickets_arrived(fixture: Fixture, since: datetime, count: int) -> None:
    """The import's tickets committed (entry.hooks.tickets_arrived): their holders are
    checked, only theirs. A few (a sale) at once on a background thread; more as a run the
    fixture's page shows. Nothing when the club is in no league's exchange."""
    if not settings.SAFEGROUND_EXCHANGE_URL:
        return
    if count > checking.SALE_HOLDERS:
        league_check_start(fixture=fixture, asked_by=BY_IMPORT, since=since)
        return
    background.submit(
        partial(_new_holders_check, fixture_id=fixture.pk, since=since), name="league sale check"
    )


def _new_holders_check(*, fixture_id: int, since: datetime) -> None:
    fixture = Fixture.objects.select_related("ground").get(pk=fixture_id)
    try:
        checking.new_holders_check(fixture=fixture, since=since)
    except (SafegroundError, oprf.OprfRefused) as failed:
        # The fixture's whole check (its page's button, or the next import's) checks them again.
        logger.warning("league check of fixture %s's new tickets failed: %s", fixture_id, failed)
