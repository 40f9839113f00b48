"""The light demo (no cup-tie tickets) plus, for the gates: a turnstile key at the home club and a
handful of tickets, one for each decision a turnstile can make."""

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta

import pytest
from django.db import connection
from django.test import Client
from django.utils import timezone

from safeground.accounts.models import Organisation
from safeground.accounts.services import device_create
from safeground.bans.models import Ban
from safeground.demo.season import demo_load
from safeground.entry.models import Ticket, TicketFlag
from safeground.entry.runtime import lookups
from safeground.matches.models import Fixture
from safeground.venues.models import Block
from tests.bans.conftest import club, cup, register  # noqa: F401  (the same light demo)


@pytest.fixture(autouse=True)
def _fresh_caches():
    """Each test starts with empty entry caches (and, as every unit test, no live-counts timer
    threads: tests/conftest.py)."""
    lookups.caches_clear()
    yield
    lookups.caches_clear()


def make_ticket(fixture: Fixture, barcode: str, block: str, end: str, **fields) -> Ticket:
    now = timezone.now()
    values = {
        "fixture": fixture,
        "barcode": barcode,
        "holder_name": f"Holder {barcode}",
        "holder_dob": date(1990, 1, 1),
        "block": Block.objects.get(ground=fixture.ground, code=block),
        "row": "C",
        "seat": "12",
        "end": end,
        "imported_at": now,
        "updated_at": now,
    }
    return Ticket.objects.create(**(values | fields))


def flag(ticket: Ticket, status: str) -> TicketFlag:
    ban = Ban.objects.filter(status=Ban.Status.ACTIVE).order_by("pk").first()
    return TicketFlag.objects.create(
        ticket=ticket, ban=ban, score=96.0, status=status, flagged_at=timezone.now()
    )


@dataclass
class Gates:
    fixture: Fixture
    key: str
    device_id: int
    before_kickoff: datetime

    def scan(
        self,
        barcode: str,
        turnstile: str = "F03",
        *,
        at: datetime | None = None,
        nonce: str | None = None,
        direction: str | None = None,
        key: str | None = None,
    ):
        body = {
            "barcode": barcode,
            "turnstile": turnstile,
            "scanned_at": (at or self.before_kickoff).isoformat(),
            "nonce": nonce or str(uuid.uuid4()),
        }
        if direction:
            body["direction"] = direction
        return Client().post(
            "/api/entry/scan",
            body,
            content_type="application/json",
            headers={"X-Device-Key": key or self.key},
        )


@pytest.fixture
def gates(club, cup) -> Gates:  # noqa: F811
    """Tickets for the cup tie: away fans come in at Gate F (F01-F11), home fans at Gate A."""
    make_ticket(cup, "AWAY-1", "S-L2", "away")
    make_ticket(cup, "AWAY-2", "S-L3", "away")
    make_ticket(cup, "HOME-1", "N-L1", "home")
    make_ticket(cup, "CANCELLED-1", "S-L2", "away", status=Ticket.Status.CANCELLED)
    flag(make_ticket(cup, "FLAGGED-1", "S-L2", "away"), TicketFlag.Status.OPEN)
    banned = make_ticket(cup, "BANNED-1", "S-L2", "away", status=Ticket.Status.CANCELLED)
    flag(banned, TicketFlag.Status.CONFIRMED)
    league = Fixture.objects.get(away_club__name="Middlesbrough")
    make_ticket(league, "LEAGUE-1", "S-L2", "away")
    _, key = device_create(
        organisation=Organisation.objects.get(name="West Ham United"),
        name="Gate F turnstile 3",
        profile="turnstile",
    )
    device_id = lookups.device_for_key(key).id  # type: ignore[union-attr]
    lookups.caches_clear()
    return Gates(cup, key, device_id, cup.kickoff - timedelta(minutes=50))


@pytest.fixture
def postgres_only() -> None:
    if connection.vendor != "postgresql":
        pytest.skip(
            "real concurrency needs PostgreSQL (SQLite serialises writers): "
            "set DATABASE_URL=postgres://... to run it"
        )


type RaceSetup = Callable[[int, str], tuple[Fixture, list[lookups.DeviceInfo]]]


@pytest.fixture
def race_tickets(postgres_only, settings) -> RaceSetup:
    """For the race tests: the demo without its tickets, then `count` away tickets for the cup tie
    (RACE-00000, ...) and two devices of the home club with `profile`."""

    def make(count: int, profile: str) -> tuple[Fixture, list[lookups.DeviceInfo]]:
        settings.SAFEGROUND_DEMO_TICKETS = "none"
        demo_load()
        match = Fixture.objects.get(away_club__name="Chelsea")
        block = Block.objects.get(ground=match.ground, code="S-L2")
        now = timezone.now()
        Ticket.objects.bulk_create(
            Ticket(fixture=match, barcode=f"RACE-{i:05d}", holder_name="Racer",
                   holder_dob=now.date(), block=block, row="A", seat=str(i), end="away",
                   imported_at=now, updated_at=now)
            for i in range(count)
        )  # fmt: skip
        home = Organisation.objects.get(name="West Ham United")
        devices = []
        for n in (1, 2):
            key = device_create(organisation=home, name=f"{profile} {n}", profile=profile)[1]
            device = lookups.device_for_key(key)
            assert device is not None
            devices.append(device)
        return match, devices

    return make
