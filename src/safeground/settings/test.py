"""Tests: SQLite in a file (so a uvicorn thread can share it) unless DATABASE_URL is set."""

import os
import tempfile
from pathlib import Path

from .base import *  # noqa: F403
from .base import BASE_DIR, DATABASES

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
# The demo's 55,000 cup-tie tickets take seconds to write; tests get two seats a block.
SAFEGROUND_DEMO_TICKETS = "sample"
# The log's tests start from an empty log; the risk and browser tests switch the history on.
SAFEGROUND_DEMO_HISTORY = False
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
ALLOWED_HOSTS = ["*"]
AXES_ENABLED = True
# Every live event a test sets off must fit its declared schema (live/catalogue.py).
SAFEGROUND_CHECK_LIVE_EVENTS = True

if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # One file per test process, so two runs at once never share (or delete) a database.
    DATABASES["default"]["TEST"] = {"NAME": str(BASE_DIR / "var" / f"test-{os.getpid()}.sqlite3")}

# Each test loads the demo afresh (the same ids, other rows): a fixture kept from an earlier test
# must not admit a socket. The tests of that cache set a bound of their own.
SAFEGROUND_LIVE_FIXTURE_CACHE_SECONDS = 0.0
