"""One step on one installation, run in its own process with that installation's environment
(DATABASE_URL, SAFEGROUND_ROLE, its signing key): `python -m tests.exchange.installation STEP`.
Prints a JSON answer. Used by test_three_installations.py only; the people are invented."""

import json
import sys
from datetime import date
from typing import Any

import django

django.setup()

from django.apps import apps  # noqa: E402

from safeground.accounts.models import Organisation, User  # noqa: E402
from safeground.bans import services as register  # noqa: E402
from safeground.bans.models import Ban  # noqa: E402
from safeground.entry.models import TicketFlag  # noqa: E402
from safeground.exchange.checking import league_check  # noqa: E402
from safeground.exchange.client import ExchangeClient  # noqa: E402
from safeground.exchange.publishing import league_publish_due, publication_state  # noqa: E402
from safeground.exchange.services import club_enrol  # noqa: E402
from safeground.matches.models import Fixture  # noqa: E402
from tests import factories  # noqa: E402

# The banned person as club A's register spells them, and as club B's ticketing system does.
BANNED = ("Ellís", "Ó Vantwíck", date(1990, 3, 4))
HOLDER = ("Ellis O Vantwick", date(1990, 4, 3))  # day and month swapped, accents dropped


def enrol(*clubs: str) -> list[str]:
    """Clubs enrolled at the exchange: name, contact, public key, and again for the next."""
    return [
        club_enrol(name=name, contact=contact, public_key=key).key_id
        for name, contact, key in zip(clubs[::3], clubs[1::3], clubs[2::3], strict=True)
    ]


def club_a() -> dict[str, Any]:
    people = factories.cast()
    first, last, born = BANNED
    ban = factories.ban(
        people.home, status="active", first_names=first, last_name=last, date_of_birth=born,
        is_life=True, scope="register", starts_on=date(2024, 1, 1),
        proposed_by=people["banofficer"], approved_by=people["safety"],
    )  # fmt: skip
    return {"ban": ban.pk, "status": ban.status}


def club_b() -> dict[str, Any]:
    day = factories.match_day(factories.cast(home=factories.organisation(name="Westbrook FC")))
    fixture = day.cup_tie
    away = factories.ticket(fixture, block="S-L2", holder_name=HOLDER[0], holder_dob=HOLDER[1])
    # A namesake born on another day, and other holders: none of them is banned.
    factories.ticket(fixture, holder_name=HOLDER[0], holder_dob=date(1991, 3, 4))
    for n in range(40):
        factories.ticket(fixture, holder_name=f"Jules Quellmoor{n}", holder_dob=date(1980, 1, 2))
    return {"fixture": fixture.pk, "ticket": away.pk, "end": away.end}


def check(fixture_id: str) -> dict[str, Any]:
    """B checks its fixture: the report, its flags after, and what the exchange gave it."""
    fixture = Fixture.objects.select_related("ground").get(pk=int(fixture_id))
    whole = league_check(fixture=fixture)
    report = {name: getattr(whole, name)
              for name in ("holders", "published", "matched", "flagged", "withdrawn")}  # fmt: skip
    return {"report": report, "flags": flags(), "published": published()}


def flags() -> list[dict[str, Any]]:
    return [
        {
            "ticket": f.ticket_id,
            "status": f.status,
            "club": f.league_ban.issuing_club if f.league_ban else None,
            "kind": f.league_ban.kind if f.league_ban else None,
            "is_life": f.league_ban.is_life if f.league_ban else None,
            "withdrawn": bool(f.league_ban and f.league_ban.withdrawn_at),
        }
        for f in TicketFlag.objects.select_related("league_ban").order_by("pk")
    ]


def overturn(ban_id: str) -> dict[str, Any]:
    """The person appeals and a third user revokes the ban (the register's own services)."""
    ban = Ban.objects.get(pk=int(ban_id))
    ban = register.ban_appeal(ban=ban, by=User.objects.get(username="banofficer"),
                              reason="The supporter's letter of appeal")  # fmt: skip
    ban = register.ban_appeal_decide(
        ban=ban, by=User.objects.get(username="security"), outcome="revoked",
        reason="Identified wrongly: the footage shows someone else",
    )  # fmt: skip
    return {"status": ban.status}


def publication() -> dict[str, Any]:
    """The club's publication: pending (a change waits for the worker) or not."""
    state = publication_state()
    return {"pending": state.pending_since is not None, "bans": state.bans}


def publish_due() -> dict[str, Any]:
    """The worker's periodic tick, by hand (the test servers run no periodic job)."""
    league_publish_due()
    return publication()


def published() -> Any:
    return ExchangeClient().get("published")


def against() -> Any:
    return ExchangeClient().get("checks-against-us")


def dump() -> dict[str, list[dict[str, Any]]]:
    """Every row of every table of this installation's database, as text."""
    found: dict[str, list[dict[str, Any]]] = {}
    for model in apps.get_models():
        rows = list(model.objects.all().values())  # type: ignore[attr-defined]
        if rows:
            found[model._meta.db_table] = rows
    return found


def organisations() -> list[str]:
    return list(Organisation.objects.values_list("name", flat=True))


if __name__ == "__main__":
    step, *args = sys.argv[1:]
    answer = globals()[step.replace("-", "_")](*args)
    print(json.dumps(answer, default=str))
