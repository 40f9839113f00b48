"""Django's HTTP requests through the served application (safeground.asgi: Django's WSGI handler
on a pool of threads behind uvicorn): bodies arrive whole and the client's address reaches the
login lockout."""

import http.client
import urllib.parse
from http.cookies import SimpleCookie

import pytest
from axes.models import AccessAttempt


@pytest.mark.django_db(transaction=True)
def test_a_large_form_arrives_whole_and_a_failed_login_is_recorded_with_the_address(
    asgi_server,
) -> None:
    host, port = asgi_server.split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    conn.request("GET", "/login/")
    page = conn.getresponse()
    page.read()
    assert page.status == 200
    cookies = SimpleCookie(page.getheader("Set-Cookie"))
    token = cookies["csrftoken"].value
    # ~600 KB: many reads of the request body; a body cut short would fail the CSRF check (403).
    form = urllib.parse.urlencode(
        {"username": "nobody-here", "password": "x" * 600_000, "csrfmiddlewaretoken": token}
    )
    conn.request(
        "POST",
        "/login/",
        body=form,
        headers={
            "Content-Type": "application/x-www-form-urlencoded",
            "Cookie": f"csrftoken={token}",
        },
    )
    answer = conn.getresponse()
    text = answer.read().decode()
    assert answer.status == 200
    assert "correct username and password" in text
    attempt = AccessAttempt.objects.get(username="nobody-here")
    assert attempt.ip_address == "127.0.0.1"
    assert attempt.failures_since_start == 1
