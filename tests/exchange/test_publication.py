"""A change of the register never waits for the exchange: the publication is pending once the
change commits, and the worker's periodic tick publishes it; while the exchange is down the
tick records what went wrong, the publication stays pending, and it is tried again a minute
later (or at once after a further change). Publishing itself is in the three-installation test."""

import socket
import time
from datetime import date, timedelta

import pytest

from safeground.exchange.models import LeaguePublication
from safeground.exchange.publishing import (
    RETRY_SECONDS,
    league_publish_due,
    publication_state,
    publication_wanted,
)
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def exchange_down(settings) -> None:
    """An exchange address where nothing listens: a port taken, then let go."""
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    settings.SAFEGROUND_EXCHANGE_URL = f"http://127.0.0.1:{port}"
    settings.SAFEGROUND_EXCHANGE_PUBLIC_KEY = "00" * 32


def league_ban() -> None:
    people = factories.cast()
    factories.ban(
        people.home, status="active", first_names="Jules", last_name="Darrowfen",
        date_of_birth=date(1988, 6, 30), is_life=True, scope="register", starts_on=date(2024, 1, 1),
        proposed_by=people["banofficer"], approved_by=people["safety"],
    )  # fmt: skip


def test_a_ban_change_leaves_the_publication_pending_without_calling_the_exchange(
    exchange_down, django_capture_on_commit_callbacks
) -> None:
    started = time.monotonic()
    with django_capture_on_commit_callbacks(execute=True):
        league_ban()
    assert time.monotonic() - started < 5
    state = publication_state()
    assert state.pending_since is not None and state.attempted_at is None


def test_the_tick_records_the_failure_keeps_it_pending_and_retries(
    exchange_down, django_capture_on_commit_callbacks
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        league_ban()
    assert league_publish_due() is None
    state = publication_state()
    assert state.pending_since is not None and "127.0.0.1" in state.failure
    tried = state.attempted_at
    league_publish_due()  # within the minute: not tried again
    assert publication_state().attempted_at == tried

    a_minute_ago = tried - timedelta(seconds=RETRY_SECONDS)  # type: ignore[operator]
    LeaguePublication.objects.update(
        attempted_at=a_minute_ago, changed_at=a_minute_ago - timedelta(seconds=1)
    )
    league_publish_due()  # no change since, but a minute after the failure: tried again
    assert publication_state().attempted_at > a_minute_ago  # type: ignore[operator]

    before = publication_state()
    publication_wanted()  # a further change (as after a commit): tried at once
    league_publish_due()
    after = publication_state()
    assert after.attempted_at > before.attempted_at  # type: ignore[operator]
    assert after.pending_since == before.pending_since  # pending since the first change
