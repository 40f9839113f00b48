"""Flags: raised when a ban comes into force or tickets are imported; confirmed (ticket cancelled,
denial ready for the gates) or cleared (recorded, not raised again)."""

from datetime import date

import pytest

from safeground.bans.models import AccessRecord
from safeground.bans.services import BanError, ban_approve
from safeground.entry.models import Ticket, TicketFlag
from safeground.entry.services import flag_clear, flag_confirm, tickets_write
from safeground.entry.ticket_file import TicketRow
from safeground.venues.models import Block

from .conftest import propose, user

pytestmark = pytest.mark.django_db


def tickets(cup, *holders: tuple[str, date]) -> list[Ticket]:
    block = Block.objects.get(ground=cup.ground, code="N-L1")
    rows = [
        TicketRow(n, f"B{n}", name, dob, block.pk, "A", str(n), "", "home")
        for n, (name, dob) in enumerate(holders, start=1)
    ]
    tickets_write(fixture=cup, rows=rows)
    return list(Ticket.objects.filter(fixture=cup).order_by("barcode"))


def test_a_ban_coming_into_force_flags_existing_tickets(club, cup) -> None:
    dob = date(1992, 3, 4)
    tickets(cup, ("Ellis Vantwick", dob), ("Ellis Vantwick", date(1992, 3, 5)))
    ban = propose(club, "Ellis", "Van-Twick", dob)
    assert not TicketFlag.objects.exists()  # a proposal flags nobody
    ban_approve(ban=ban, by=user("safety"), reason="CCTV reviewed")
    flag = TicketFlag.objects.get()
    assert (flag.ticket.barcode, flag.ban_id, flag.status) == ("B1", ban.pk, "open")


def test_a_ban_that_does_not_cover_the_match_flags_nobody(club, cup) -> None:
    dob = date(1992, 3, 4)
    tickets(cup, ("Ellis Vantwick", dob))
    ban = propose(
        club, "Ellis", "Vantwick", dob, starts_on=date(2017, 1, 1), ends_on=date(2020, 1, 1)
    )
    ban_approve(ban=ban, by=user("safety"), reason="ok")
    assert not TicketFlag.objects.exists()


def test_confirming_cancels_the_ticket_and_clearing_is_recorded(club, cup) -> None:
    dob = date(1992, 3, 4)
    tickets(cup, ("Ellis Vantwick", dob), ("Ellis Vantwick", dob))
    ban_approve(ban=propose(club, "Ellis", "Vantwick", dob), by=user("safety"), reason="ok")
    first, second = TicketFlag.objects.order_by("ticket__barcode")
    officer = user("banofficer")
    with pytest.raises(BanError, match="note"):
        flag_confirm(flag=first, by=officer, note="")
    flag_confirm(flag=first, by=officer, note="Same face as the CCTV still")
    flag_clear(flag=second, by=officer, note="Father of the same name; ID checked")
    first.refresh_from_db()
    assert first.status == "confirmed"
    assert first.ticket.status == Ticket.Status.CANCELLED
    assert first.ticket.cancelled_reason == f"holder banned (ban #{first.ban_id})"
    assert Ticket.objects.get(barcode="B2").status == Ticket.Status.VALID
    assert list(
        AccessRecord.objects.filter(action__in=["confirm_flag", "clear_flag"])
        .order_by("pk")
        .values_list("action", "reason")
    ) == [
        ("confirm_flag", "Same face as the CCTV still"),
        ("clear_flag", "Father of the same name; ID checked"),
    ]
    with pytest.raises(BanError, match="already"):
        flag_clear(flag=first, by=officer, note="changed my mind")
    # A cleared pair is not raised again on the next import.
    assert tickets_write(fixture=cup, rows=[]).match.flagged == 0
    assert TicketFlag.objects.count() == 2
