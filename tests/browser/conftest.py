"""Browser tests: the real ASGI app under uvicorn in a thread, driven by Debian's Chromium.

They run in their own pytest process (`pytest -m browser`): Playwright's sync API and
async_to_sync cannot share a thread (STACK.md).
"""

import os
import time
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from safeground.demo.season import DEMO_PASSWORD, demo_load

os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture(scope="session")
def server(asgi_server: str) -> str:
    return f"http://{asgi_server}"


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path="/usr/bin/chromium", headless=True, args=CHROMIUM_ARGS
        )
        yield chromium
        chromium.close()


@pytest.fixture
def site(server, transactional_db, settings, request):
    """The demo loaded and served; the second factor off unless a test turns it on. The demo's log
    before the cup tie only for tests marked `demo_history` (the others start from an empty log)."""
    settings.SAFEGROUND_REQUIRE_2FA = False
    settings.SAFEGROUND_DEMO_HISTORY = request.node.get_closest_marker("demo_history") is not None
    demo_load()
    yield server
    _server_quiet()


def _server_quiet(timeout: float = 10.0) -> None:
    """PostgreSQL: wait (the test's pages closed) until no other session of the test database is
    in a statement or a transaction for 150 ms: a request of a page just closed, or a push
    batch, racing the flush's TRUNCATE after the test deadlocks with it, and the next test
    then finds this one's rows."""
    from django.db import connection

    if connection.vendor != "postgresql":
        return
    deadline, quiet = time.monotonic() + timeout, 0
    while quiet < 3 and time.monotonic() < deadline:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                " AND pid <> pg_backend_pid() AND backend_type = 'client backend'"
                " AND state <> 'idle'"
            )
            quiet = quiet + 1 if cursor.fetchone()[0] == 0 else 0
        time.sleep(0.05)


def _new_page(browser: Browser, viewport: dict[str, int] | None = None) -> Page:
    context = browser.new_context(viewport=viewport or {"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(10_000)
    return page


@pytest.fixture
def new_page(browser):
    pages: list[Page] = []

    def make(viewport: dict[str, int] | None = None) -> Page:
        page = _new_page(browser, viewport)
        pages.append(page)
        return page

    yield make
    for page in pages:
        page.context.close()


@pytest.fixture
def log_in(site):
    def log_in(page: Page, username: str, password: str = DEMO_PASSWORD) -> Page:
        page.goto(f"{site}/login/")
        page.get_by_label("Username").fill(username)
        page.get_by_label("Password").fill(password)
        page.get_by_role("button", name="Log in").click()
        page.wait_for_load_state()
        return page

    return log_in
