"""CSRF: a logged-in user's browser can be made to send a request by another site; only a
request carrying the CSRF token may change anything.

Every page route (any of them may take a form) and every state-changing route of the
session-authenticated API (the POST/PATCH/DELETE rows of the permission table) is sent once
without the token, by a user the permission table lets in: 403, and no row written anywhere.
The same request with the token is not refused for CSRF (so it is the check that refused it).

Device-keyed routes (scans, offline uploads, the bundle) are exempt by design: a device sends
its key in a header, never a cookie, so another site cannot make a browser send it.
"""

import re
import secrets
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client
from django.urls import reverse

from safeground.accounts.models import User
from tests.rows import rows_written
from tests.test_permissions import (  # noqa: F401  (match_day_with_register is a fixture)
    METHODS,
    ROLES,
    TABLE,
    match_day_with_register,
)

# Header, not cookie: another site cannot make a browser send these (accounts/devices.py); so
# too the phone's alert receipt (its X-Alert-Token MAC), the league exchange's routes (a club's
# Ed25519 signature) and the supporters' text line (the provider's HMAC over the body).
DEVICE_KEYED = {
    "api:entry_scan",
    "api:entry_offline_scans",
    "api:alert_receipt",
    "supporters_sms",
    *(route for route in TABLE if route.startswith("api:exchange_")),
}
SRC = Path(__file__).resolve().parents[1] / "src" / "safeground"


def allowed_role(expected: dict[str, int]) -> str:
    """The first of the cast the table lets through (else the safety officer: refused either
    way, which still shows the CSRF check comes first)."""
    for role in ROLES:
        if 200 <= expected[role] < 300 or expected[role] == 405:
            return role
    return "safety"


def client_of(role: str) -> Client:
    client = Client(enforce_csrf_checks=True)
    if role != "anonymous":
        client.force_login(User.objects.get(username=role))
    return client


def send(client: Client, route: str, url: str, body: list, token: str | None):
    headers = {"X-CSRFToken": token} if token else {}
    if token:
        client.cookies["csrftoken"] = token
    method = METHODS.get(route, "post")
    if route.startswith("api:"):
        if body and callable(body[0]):
            return client.post(url, body[0](), headers=headers)
        data = body[0] if body else {}
        return getattr(client, method)(url, data, content_type="application/json", headers=headers)
    return client.post(url, {}, headers=headers)


def state_changing_rows() -> list[str]:
    routes = []
    for route, rows in TABLE.items():
        if route in DEVICE_KEYED or route == "admin:*":
            continue
        if route.startswith("api:"):
            if any(len(row) > 2 for row in rows) or route in METHODS:
                routes.append(route)
        else:
            routes.append(route)  # pages: every one refuses a POST without the token
    return sorted(routes)


@pytest.fixture
def no_pdf_layout(monkeypatch) -> None:
    """The printed documents' views run whole (their templates rendered) but WeasyPrint lays
    out no pages: seconds a document, and what the sweep shows is whether the CSRF check let
    the request through (tests/test_printing.py and the reports' tests print them for real)."""
    import weasyprint

    monkeypatch.setattr(weasyprint.HTML, "write_pdf", lambda self, *a, **kw: b"%PDF-1.7\n%%EOF\n")


@pytest.mark.usefixtures("match_day_with_register", "no_second_factor", "no_pdf_layout")
def test_a_request_without_the_csrf_token_is_refused_and_writes_nothing() -> None:
    wrong = []
    for route in state_changing_rows():
        for url_of, expected, *body in TABLE[route]:
            role = allowed_role(expected)
            url = url_of()  # may write the objects the route acts on: before the count
            client = client_of(role)  # logging in writes a session and an access log: before too
            before = rows_written()
            refused = send(client, route, url, body, token=None)
            if refused.status_code != 403:
                wrong.append(f"{role} {url} without a token: {refused.status_code}")
            if rows_written() != before:
                wrong.append(f"{role} {url} without a token wrote rows")

            with_token = send(client, route, url, body, token=secrets.token_hex(16))
            if with_token.status_code == 403 and expected[role] != 403:
                wrong.append(f"{role} {url} with the token: 403, expected {expected[role]}")
    assert len(state_changing_rows()) > 80
    assert wrong == [], "\n".join(wrong)


def test_the_admin_refuses_a_post_without_the_token(db) -> None:
    admin = User.objects.create_superuser("root", password="not-a-real-password-1")
    client = Client(enforce_csrf_checks=True)
    client.force_login(admin)
    before = rows_written()
    assert client.post("/admin/accounts/user/add/", {"username": "x"}).status_code == 403
    assert rows_written() == before


FORM = re.compile(r"<form\b[^>]*>.*?</form>", re.S | re.I)
POST = re.compile(r"""method\s*=\s*["']?post""", re.I)


def test_every_post_form_in_the_templates_carries_the_csrf_token() -> None:
    templates = sorted(SRC.rglob("templates/**/*.html"))
    assert len(templates) > 20
    missing, forms = [], 0
    for template in templates:
        for form in FORM.findall(template.read_text()):
            opening = form.split(">", 1)[0]
            if POST.search(opening):
                forms += 1
                if "{% csrf_token %}" not in form:
                    missing.append(f"{template.relative_to(SRC)}: {opening[:80]}")
    assert forms > 20
    assert missing == []


def test_htmx_requests_carry_the_token_from_the_page() -> None:
    """hx-post / hx-delete / hx-patch elements send no form token: htmx adds the header that
    static/safeground/htmx-requests-1.js reads from the page's meta tag, on every page
    (base.html)."""
    base = (SRC / "templates" / "base.html").read_text()
    assert '<meta name="csrf-token" content="{{ csrf_token }}">' in base
    assert "safeground/htmx-requests-1.js" in base
    script = (SRC / "static" / "safeground" / "htmx-requests-1.js").read_text()
    assert "X-CSRFToken" in script and "htmx:configRequest" in script
    for template in SRC.rglob("templates/**/*.html"):
        text = template.read_text()
        if re.search(r"hx-(post|patch|delete|put)=", text):
            assert (
                "{% extends" in text or template.name.startswith("_") or "panel" in str(template)
            ), f"{template}: an htmx write outside a page built on base.html"


@pytest.mark.django_db
def test_the_page_names_the_cookie_its_scripts_read_the_token_from(client) -> None:
    """static/safeground/api-1.js reads the token from the cookie (fresher than a page a service
    worker kept), by the name this meta tag gives; the cookie comes with the page."""
    response = client.get(reverse("login"))
    page = response.content.decode()
    assert f'<meta name="csrf-cookie" content="{settings.CSRF_COOKIE_NAME}">' in page
    assert response.cookies[settings.CSRF_COOKIE_NAME].value
