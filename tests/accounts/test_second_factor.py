"""Every route a privileged role could open (the permission table's rows that let it in) is held
at the second factor until the session has passed it: pages redirect to the TOTP step, the API
answers 403 `second_factor_required`, and a write is not made. (The live socket: tests/live/
test_websocket.py::test_a_privileged_user_needs_the_second_factor_on_the_socket_too.)"""

import pytest
from django.test import Client

from safeground.accounts.middleware import EXEMPT_PREFIXES
from safeground.accounts.models import Role
from safeground.accounts.permissions import SECOND_FACTOR_ROLES
from tests import factories
from tests.rows import rows_written
from tests.test_permissions import (  # noqa: F401  (match_day_with_register is a fixture)
    TABLE,
    match_day_with_register,
    send_row,
)

PRIVILEGED = [name for name, _, role in factories.CAST if role in SECOND_FACTOR_ROLES]


def test_the_privileged_roles_are_those_of_the_design() -> None:
    assert {
        Role.SAFETY_OFFICER,
        Role.POLICE_COMMANDER,
        Role.BAN_OFFICER,
        Role.AUDITOR,
    } == SECOND_FACTOR_ROLES
    assert set(PRIVILEGED) == {"safety", "police", "banofficer", "auditor", "liaison", "security"}


@pytest.mark.usefixtures("match_day_with_register")
def test_no_route_opens_to_a_privileged_role_before_the_second_factor(cast) -> None:
    clients = {}
    for username in PRIVILEGED:
        clients[username] = Client()
        clients[username].force_login(cast[username])
    held, wrong = 0, []
    for route, rows in TABLE.items():
        for url_of, expected, *body in rows:
            let_in = [u for u in PRIVILEGED if 200 <= expected[u] < 300 or expected[u] == 405]
            if not let_in:
                continue
            # One URL for every role the row lets in: a held request changes nothing (that is
            # checked), so the objects it names are as fresh for the next role as the first.
            url = url_of()
            if url.startswith(EXEMPT_PREFIXES) or route.startswith("api:openapi"):
                continue
            for username in let_in:
                before = rows_written()
                response = send_row(clients[username], route, url, body)
                held += 1
                if url.startswith("/api/"):
                    ok = (
                        response.status_code == 403
                        and response.json()["code"] == "second_factor_required"
                    )
                else:
                    ok = response.status_code == 302 and response["Location"].startswith(
                        "/account/2fa/?next="
                    )
                if not ok:
                    wrong.append(f"{username} {url}: {response.status_code}")
                if rows_written() != before:
                    wrong.append(f"{username} {url}: wrote rows before the second factor")
    assert held > 150
    assert wrong == []
