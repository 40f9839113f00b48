"""Tests: SQLite in a file (so a uvicorn thread can share it) unless DATABASE_URL is set."""

import os
import tempfile
from pathlib import Path

from .base import *  # noqa: F403
from .base import BASE_DIR, CACHES, DATABASES, REDIS_URL

SECRET_KEY = "test-only"
DEBUG = False
SAFEGROUND_REQUIRE_2FA = True
# Uploaded files (photos) go to a folder of this test run, not the developer's var/media.
MEDIA_ROOT = Path(tempfile.gettempdir()) / f"safeground-test-media-{os.getpid()}"
# Checkpoint files too: a folder of this test run.
SAFEGROUND_CHECKPOINT_STORAGE = {
    "BACKEND": "django.core.files.storage.FileSystemStorage",
    "OPTIONS": {
        "location": str(MEDIA_ROOT.with_name(f"safeground-test-checkpoints-{os.getpid()}"))
    },
}
# The CAP feed's signing key: made once per test run, in its folder.
SAFEGROUND_CAP_SIGNING_FILE = str(MEDIA_ROOT.with_name(f"safeground-test-cap-{os.getpid()}.pem"))
# The server a test starts runs no periodic job behind the test's back: the tests run them by hand.
SAFEGROUND_PERIODIC_TASKS_IN_SERVER = False
# The demo's 55,000 cup-tie tickets take seconds to write; tests get two seats a block.
SAFEGROUND_DEMO_TICKETS = "sample"
# The log's tests start from an empty log; the risk and browser tests switch the history on.
SAFEGROUND_DEMO_HISTORY = False
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
ALLOWED_HOSTS = ["*"]
AXES_ENABLED = True
# Every live event a test sets off must fit its declared schema (live/catalogue.py).
SAFEGROUND_CHECK_LIVE_EVENTS = True
# Push alerts go to the tests' own push receiver on this machine (tests/alerts/push_receiver.py).
SAFEGROUND_PUSH_HOSTS = ["127.0.0.1"]

if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # One file per test process, so two runs at once never share (or delete) a database.
    DATABASES["default"]["TEST"] = {"NAME": str(BASE_DIR / "var" / f"test-{os.getpid()}.sqlite3")}

# Each test loads the demo afresh (the same ids, other rows): a fixture kept from an earlier test
# must not admit a socket. The tests of that cache set a bound of their own.
SAFEGROUND_LIVE_FIXTURE_CACHE_SECONDS = 0.0
SAFEGROUND_LOG_CACHE_SECONDS = 0.0  # likewise the log's categories, places and zone maps
SAFEGROUND_MATCH_ON_NOW_CACHE_SECONDS = 0.0  # and the match on now at a ground
SAFEGROUND_SUPPORTERS_QUEUE_GAP_SECONDS = 0.0  # and the queue's fragment made at every read

# pytest-xdist runs the suite in worker processes at once (scripts/run-tests). Each has its own
# test database (pytest-django adds the worker's name) and its own Redis database number: Redis
# pub/sub ignores the number, but the live channel names carry it (live/transport.py's
# channel_prefix), so two workers' match 1 never hear each other. Numbers go up in twos: a bus
# test publishes on its own number + 1 to prove another installation is not heard.
_worker = os.environ.get("PYTEST_XDIST_WORKER", "")
# A server process a test starts inherits both variables: its number is already the worker's.
if REDIS_URL and _worker.startswith("gw") and os.environ.get("SAFEGROUND_REDIS_WORKER") != _worker:
    from urllib.parse import urlsplit

    _parts = urlsplit(REDIS_URL)
    _number = int(_parts.path.strip("/") or 0) + 2 * int(_worker.removeprefix("gw"))
    if _number > 15:
        raise RuntimeError(f"REDIS_URL: worker {_worker} would need Redis database {_number}")
    REDIS_URL = _parts._replace(path=f"/{_number}").geturl()
    # Tests that read the environment (tests/live/conftest.py) see the same number.
    os.environ["REDIS_URL"] = REDIS_URL
    os.environ["SAFEGROUND_REDIS_WORKER"] = _worker

# The limits count in this process's memory here, whatever REDIS_URL says: each test starts with
# none counted (tests/conftest.py clears them), and clearing a Redis cache would empty the
# database the live tests' servers share. tests/api/test_limits.py counts in Redis itself.
CACHES = {
    **CACHES,
    "limits": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "limits"},
}
