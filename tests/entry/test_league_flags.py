"""A league ban's flag at the turnstile (safeground.exchange): open, the holder's identity is
checked; confirmed, refused `banned`; withdrawn by the issuing club, no longer `banned`."""

import pytest
from django.db import connection
from django.utils import timezone

from safeground.accounts.models import User
from safeground.bans.models import LeagueBan
from safeground.entry import decision
from safeground.entry.models import TicketFlag
from safeground.entry.services import flag_confirm

from .conftest import make_ticket

pytestmark = pytest.mark.django_db


@pytest.fixture(params=["sql", "orm"])
def engine(request, monkeypatch):
    """Both implementations of the decision (tests/entry/test_scan.py's)."""
    if request.param == "sql" and connection.vendor != "postgresql":
        pytest.skip("the one-statement path is PostgreSQL's; SQLite runs the ORM path")
    monkeypatch.setattr(decision, "USE_SQL", request.param == "sql")
    return request.param


def league_flag(gates, barcode: str) -> TicketFlag:
    ban = LeagueBan.objects.create(
        organisation_id=gates.fixture.ground.organisation_id, reference="ab" * 16,
        kind="club_ban", is_life=True, issuing_club="Northbank Rovers",
        contact="security@northbank.example", first_matched_at=timezone.now(),
    )  # fmt: skip
    ticket = make_ticket(gates.fixture, barcode, "S-L2", "away")
    return TicketFlag.objects.create(
        ticket=ticket, league_ban=ban, score=100.0, flagged_at=timezone.now()
    )


def test_a_league_flag_is_checked_then_refused_banned_until_withdrawn(gates, engine) -> None:
    flag = league_flag(gates, "LEAGUE-BAN-1")
    assert gates.scan("LEAGUE-BAN-1").json()["reason"] == "flagged"
    officer = User.objects.filter(memberships__role="ban_officer").first()
    flag_confirm(flag=flag, by=officer, note="Same person: the issuing club confirmed")  # type: ignore[arg-type]
    refused = gates.scan("LEAGUE-BAN-1").json()
    assert (refused["decision"], refused["reason"]) == ("deny", "banned")
    flag.ticket.refresh_from_db()
    assert "league ban of Northbank Rovers" in flag.ticket.cancelled_reason
    LeagueBan.objects.update(withdrawn_at=timezone.now())
    after = gates.scan("LEAGUE-BAN-1").json()
    assert after["reason"] == "cancelled"  # the ticket stays cancelled; the ban no longer holds
