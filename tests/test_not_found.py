"""Not found, as `make run` (DEBUG on) answers it: the plain 404 page, never Django's technical
page with the list of every address of the site; the API's 404 stays in its one shape; the
favicon is there."""

import pytest
from django.test import Client

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("no_second_factor")]

TECHNICAL = "URLconf"  # Django's technical 404 names the URLconf it tried


def plain_404(answer) -> None:
    assert answer.status_code == 404
    html = answer.content.decode()
    assert "There is nothing at this address." in html
    assert TECHNICAL not in html and "Page not found at" not in html


def test_an_address_nothing_answers_is_the_plain_404_page_under_debug(settings, cast) -> None:
    settings.DEBUG = True
    plain_404(Client().get("/no-such-page/"))
    plain_404(Client().get("/fixtures/1/no-such-tab/"))


def test_a_views_not_found_is_the_plain_404_page_under_debug(settings, client_for) -> None:
    settings.DEBUG = True
    plain_404(client_for("safety").get("/fixtures/999999/report/"))


def test_the_api_keeps_its_one_shape_for_not_found_under_debug(settings, client_for) -> None:
    settings.DEBUG = True
    answer = client_for("safety").get("/api/no-such-route")
    assert answer.status_code == 404
    assert set(answer.json()) == {"code", "field", "detail"}


def test_the_favicon_is_there_and_every_page_names_it(client) -> None:
    answer = client.get("/favicon.ico")
    assert answer.status_code == 301
    assert answer["Location"].endswith("safeground/favicon-1.svg")
    login = client.get("/login/").content.decode()
    assert 'rel="icon" href="/static/safeground/favicon-1.svg"' in login
