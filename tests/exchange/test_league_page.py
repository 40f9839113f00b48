"""The safety officer's page of the league's exchange: this club's publication (pending while a
change waits for the worker) and the exchange's record of the club, fetched from the exchange
(here this test's own server, switched to the exchange role, with this club enrolled)."""

import socket

import pytest
from django.urls import reverse

from safeground import signing
from safeground.exchange import services
from safeground.exchange.publishing import publication_wanted

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def enrolled(settings, asgi_server, no_second_factor):
    settings.SAFEGROUND_ROLE = "exchange"
    settings.SAFEGROUND_EXCHANGE_URL = f"http://{asgi_server}"
    return services.club_enrol(
        name="Riverside Athletic", contact="security@riverside.example",
        public_key=signing.public_key_json()["public_key"],
    )  # fmt: skip


def test_the_safety_officer_sees_the_exchanges_record_of_the_club(enrolled, client_for) -> None:
    services.publication_replace(club=enrolled, bans=[
        services.PublishedBanIn(reference="ab" * 8, kind="club_ban", is_life=True, ends_on=None,
                                tokens=["cd" * 64, "ef" * 64]),
    ])  # fmt: skip
    check = services.check_begin(club=enrolled, fixture="fixture 41", holders=120, tickets=130,
                                 coming=400)  # fmt: skip
    services.check_outcome(club=enrolled, check=check, matched=2)
    publication_wanted()

    page = client_for("safety").get(reverse("league_record"))
    assert page.status_code == 200
    html = page.content.decode()
    assert "data-pending" in html and "data-failure" not in html
    assert "1 ban published and in force" in html
    checks = html.split("data-checks", 1)[1]
    assert "fixture 41" in checks and "<td>120</td>" in checks and "<td>2</td>" in checks

    assert client_for("steward").get(reverse("league_record")).status_code == 403
    register = client_for("safety").get(reverse("register")).content.decode()
    assert f'href="{reverse("league_record")}"' in register  # linked from the register's pages


def test_the_page_says_so_when_the_exchange_does_not_answer(enrolled, settings, client_for):
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        settings.SAFEGROUND_EXCHANGE_URL = f"http://127.0.0.1:{free.getsockname()[1]}"
    page = client_for("safety").get(reverse("league_record"))
    assert page.status_code == 200 and "data-unreachable" in page.content.decode()
    settings.SAFEGROUND_EXCHANGE_URL = ""
    alone = client_for("safety").get(reverse("league_record"))
    assert alone.status_code == 404
    html = alone.content.decode()
    assert "This club is not enrolled in a league's ban exchange." in html
    assert "safeground league-key" in html and "SAFEGROUND_EXCHANGE_URL" in html
