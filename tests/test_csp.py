"""Content Security Policy with no inline script: every HTML page a role can open (the
permission table's GET rows, by a role it lets in) is served with a policy whose script-src is
'self' alone (no nonce, no 'unsafe-inline'), and its HTML has nothing a browser would run
inline: no <script> without src, no on...= handler, no javascript: URL. So text that slipped
past escaping still could not run a script."""

import re

import pytest
from django.test import Client

from safeground.accounts.models import User
from tests.test_permissions import (  # noqa: F401  (match_day_with_register is a fixture)
    METHODS,
    ROLES,
    TABLE,
    match_day_with_register,
)

SCRIPT = re.compile(r"<script\b([^>]*)>", re.I)
HANDLER = re.compile(r"<[a-z][^>]*\son[a-z]+\s*=", re.I)
JAVASCRIPT_URL = re.compile(r"""(href|src|action|formaction)\s*=\s*["']?\s*javascript:""", re.I)


def directives(policy: str) -> dict[str, list[str]]:
    found = {}
    for part in policy.split(";"):
        words = part.split()
        if words:
            found[words[0]] = words[1:]
    return found


def inline_code(html: str) -> list[str]:
    problems = [
        f"inline <script{attrs}>"
        for attrs in SCRIPT.findall(html)
        # Data for a script ({{ x|json_script }}): a browser never runs it.
        if "src=" not in attrs and 'type="application/json"' not in attrs
    ]
    problems += [f"handler: {m.group(0)[:80]}" for m in HANDLER.finditer(html)]
    problems += [f"javascript: URL: {m.group(0)}" for m in JAVASCRIPT_URL.finditer(html)]
    return problems


def test_the_scan_for_inline_code_finds_each_kind() -> None:
    """The checks below can fail: each kind of inline code is found."""
    assert inline_code('<script src="/static/a.js"></script>') == []
    assert len(inline_code("<script>alert(1)</script>")) == 1
    assert len(inline_code('<script type="module">alert(1)</script>')) == 1
    assert inline_code('<script id="d" type="application/json">{"a": 1}</script>') == []
    assert len(inline_code('<img src=x onerror="alert(1)">')) == 1
    assert len(inline_code('<a href="javascript:alert(1)">x</a>')) == 1
    # Text that merely mentions them, escaped, is not code.
    assert inline_code("&lt;script&gt;alert(1)&lt;/script&gt; onerror=x") == []


@pytest.mark.usefixtures("match_day_with_register", "no_second_factor")
def test_every_page_has_the_policy_and_no_inline_script() -> None:
    pages, wrong = 0, []
    for route, rows in TABLE.items():
        if route in METHODS:
            continue
        for url_of, expected, *body in rows:
            if body:
                continue
            for role in ROLES:
                if expected[role] != 200:
                    continue
                client = Client()
                if role != "anonymous":
                    client.force_login(User.objects.get(username=role))
                url = url_of()
                response = client.get(url)
                if not response.get("Content-Type", "").startswith("text/html"):
                    break  # a PDF, a CSV, JSON: the same for every role
                pages += 1
                policy = directives(response.get("Content-Security-Policy", ""))
                if policy.get("script-src") != ["'self'"]:
                    wrong.append(f"{url}: script-src {policy.get('script-src')}")
                if policy.get("default-src") != ["'self'"]:
                    wrong.append(f"{url}: default-src {policy.get('default-src')}")
                if (
                    policy.get("object-src", ["'none'"]) != ["'none'"]
                    and "default-src" not in policy
                ):
                    wrong.append(f"{url}: object-src")
                wrong += [f"{url}: {problem}" for problem in inline_code(response.content.decode())]
    assert pages > 200  # each page as each role it lets in: what it shows differs
    assert wrong == []


@pytest.mark.parametrize("path", ["/login/", "/account/2fa/"])
def test_the_login_pages_have_the_policy(path: str, cast) -> None:
    client = Client()
    if path == "/account/2fa/":
        client.force_login(cast["safety"])
    response = client.get(path)
    assert response.status_code == 200
    policy = directives(response["Content-Security-Policy"])
    assert policy["script-src"] == ["'self'"]
    assert policy["frame-ancestors"] == ["'none'"]
    assert inline_code(response.content.decode()) == []
