"""Every route by every demo role, with the status each must get. A route without a row fails.

The table is the specification of who may open what; later work adds its routes here.
"""

from collections.abc import Callable

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from safeground.demo.season import LOGINS
from safeground.matches.models import Fixture

ROLES = ["anonymous", *[login.username for login in LOGINS]]
CLUB = ["safety", "loggist", "supervisor", "steward", "banofficer", "auditor"]
POLICE = ["police", "spotter"]
GROUND_STAFF = ["safety", "loggist", "supervisor", "banofficer", "auditor"]


def expect(anonymous: int, default: int, **by_role: int) -> dict[str, int]:
    table = {role: default for role in ROLES}
    table["anonymous"] = anonymous
    table.update(by_role)
    return table


def only(anonymous: int, allowed: list[str], yes: int, no: int) -> dict[str, int]:
    return expect(anonymous, no, **dict.fromkeys(allowed, yes))


def cup_tie() -> Fixture:
    return Fixture.objects.get(away_club__name="Chelsea")


def league_match() -> Fixture:
    return Fixture.objects.get(away_club__name="Middlesbrough")


# route name -> (how to build its URL, expected GET status per role)
Row = tuple[Callable[[], str], dict[str, int]]
TABLE: dict[str, list[Row]] = {
    "login": [(lambda: reverse("login"), expect(200, 302))],
    "logout": [(lambda: reverse("logout"), expect(405, 405))],
    "second_factor": [(lambda: reverse("second_factor"), expect(302, 200))],
    "home": [(lambda: reverse("home"), expect(302, 200))],
    "ground": [
        (
            lambda: reverse("ground", args=["london-stadium"]),
            only(302, GROUND_STAFF, 200, 403),
        )
    ],
    "fixture": [
        (lambda: reverse("fixture", args=[cup_tie().pk]), expect(302, 200)),
        (lambda: reverse("fixture", args=[league_match().pk]), expect(302, 200, liaison=403)),
    ],
    "api:fixture_list": [(lambda: reverse("api:fixture_list"), expect(401, 200))],
    "api:fixture_detail": [
        (lambda: reverse("api:fixture_detail", args=[cup_tie().pk]), expect(401, 200)),
        (
            lambda: reverse("api:fixture_detail", args=[league_match().pk]),
            expect(401, 200, liaison=403),
        ),
    ],
    # Users are not devices: only a device key opens it (tests/accounts/test_devices.py).
    "api:device_whoami": [(lambda: reverse("api:device_whoami"), expect(401, 401))],
    "api:api-root": [(lambda: reverse("api:api-root"), expect(404, 404))],
    "api:openapi-json": [(lambda: reverse("api:openapi-json"), expect(200, 200))],
    "api:openapi-view": [(lambda: reverse("api:openapi-view"), expect(200, 200))],
    # The admin site is for superusers only; no demo role is one.
    "admin:*": [(lambda: reverse("admin:index"), expect(302, 302))],
}


def route_names(patterns: list, namespace: str = "") -> set[str]:
    names: set[str] = set()
    for entry in patterns:
        if isinstance(entry, URLResolver):
            inner = f"{namespace}{entry.namespace}:" if entry.namespace else namespace
            names |= route_names(entry.url_patterns, inner)
        elif isinstance(entry, URLPattern) and entry.name:
            names.add(f"{namespace}{entry.name}")
    return names


def table_key(name: str) -> str:
    return "admin:*" if name.startswith("admin:") else name


def test_every_route_has_a_row() -> None:
    routes = {table_key(name) for name in route_names(get_resolver().url_patterns)}
    assert routes - set(TABLE) == set(), "routes without a permission row"
    assert set(TABLE) - routes == set(), "rows for routes that no longer exist"


def test_unnamed_routes_do_not_exist() -> None:
    def unnamed(patterns: list) -> list[str]:
        found = []
        for entry in patterns:
            if isinstance(entry, URLResolver):
                if entry.namespace != "admin":
                    found += unnamed(entry.url_patterns)
            elif not entry.name:
                found.append(str(entry.pattern))
        return found

    assert unnamed(get_resolver().url_patterns) == []


@pytest.mark.parametrize("route", sorted(TABLE))
def test_route_status_for_every_role(route: str, demo, no_second_factor, login_as) -> None:
    wrong = []
    for role in ROLES:
        client = Client() if role == "anonymous" else login_as(role)
        for url_of, expected in TABLE[route]:
            url = url_of()
            status = client.get(url).status_code
            if status != expected[role]:
                wrong.append(f"{role} GET {url}: {status}, expected {expected[role]}")
    assert wrong == []
