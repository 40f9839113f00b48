"""Three installations, each its own server process and database: club A, club B and the
league's exchange (docs/adr/0015-league-ban-exchange.md). Club A's life ban flags the holder of
an away ticket club B imported; overturned on appeal, it no longer flags at B's next check; B
cannot list A's bans; and the exchange's database holds no holder's name, date of birth or
token. On SQLite files, or on PostgreSQL when DATABASE_URL is set (databases named after it)."""

import base64
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
NAMES = ("a", "b", "x")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _databases() -> Iterator[dict[str, str]]:
    """Each installation's DATABASE_URL: PostgreSQL databases named after the test run's, made
    afresh, or SQLite files in a folder of this run."""
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith("postgres"):
        with tempfile.TemporaryDirectory() as folder:
            yield {n: f"sqlite:///{folder}/{n}.sqlite3" for n in NAMES}
        return
    parts = urlsplit(url)
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    base = parts.path.strip("/") + (f"_{worker}" if worker else "")
    names = {n: f"{base}_{n}" for n in NAMES}
    _postgres(url, [f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)' for name in names.values()])
    _postgres(url, [f'CREATE DATABASE "{names["a"]}"'])
    try:
        yield {n: parts._replace(path=f"/{name}").geturl() for n, name in names.items()}
    finally:
        _postgres(url, [f'DROP DATABASE IF EXISTS "{n}" WITH (FORCE)' for n in names.values()])


def _postgres(url: str, statements: list[str]) -> None:
    import psycopg

    admin = urlsplit(url)._replace(path="/postgres").geturl()
    with psycopg.connect(admin, autocommit=True) as db:
        for statement in statements:
            db.execute(statement)


def _copy_schema(databases: dict[str, str]) -> None:
    """B's and the exchange's databases as A's once migrated: one migration for three."""
    first = databases["a"]
    if first.startswith("sqlite"):
        for n in ("b", "x"):
            shutil.copyfile(
                first.removeprefix("sqlite:///"), databases[n].removeprefix("sqlite:///")
            )
        return
    source = urlsplit(first).path.strip("/")
    _postgres(first, [
        f'CREATE DATABASE "{urlsplit(databases[n]).path.strip("/")}" TEMPLATE "{source}"'
        for n in ("b", "x")
    ])  # fmt: skip


class Installation:
    def __init__(self, name: str, database: str, exchange_url: str = "") -> None:
        self.name = name
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        seed = os.urandom(32)
        key = Ed25519PrivateKey.from_private_bytes(seed).public_key()
        raw = key.public_bytes(Encoding.Raw, PublicFormat.Raw)
        self.public_key = base64.urlsafe_b64encode(raw).rstrip(b"=").decode()
        self.env = {
            k: v for k, v in os.environ.items() if k not in {"REDIS_URL", "DATABASE_URL"}
        } | {
            "DJANGO_SETTINGS_MODULE": "safeground.settings.test",
            "DATABASE_URL": database,
            "SAFEGROUND_BUNDLE_SIGNING_KEY": base64.b64encode(seed).decode(),
            "SAFEGROUND_EXCHANGE_URL": exchange_url,
            "SAFEGROUND_ROLE": "exchange" if name == "x" else "club",
        }
        self.server: subprocess.Popen[bytes] | None = None

    def run(self, *args: str) -> Any:
        """A step in a process of this installation (tests/exchange/installation.py)."""
        done = subprocess.run(
            [sys.executable, "-m", "tests.exchange.installation", *args],
            cwd=ROOT, env=self.env, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert done.returncode == 0, f"{self.name} {args}: {done.stderr[-3000:]}"
        return json.loads(done.stdout.strip().splitlines()[-1])

    def command(self, *args: str) -> str:
        done = subprocess.run(
            [str(BIN / "safeground"), *args],
            cwd=ROOT, env=self.env, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert done.returncode == 0, f"{self.name} {args}: {done.stderr[-3000:]}"
        return done.stdout

    def serve(self, *args: str) -> None:
        self.server = subprocess.Popen(
            [str(BIN / "safeground"), *args, "--port", str(self.port)],
            cwd=ROOT, env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )  # fmt: skip

    def wait_ready(self, seconds: float = 60) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            assert self.server is not None and self.server.poll() is None, (
                self.server.stderr.read().decode()[-3000:]  # type: ignore[union-attr]
            )
            try:
                urllib.request.urlopen(f"{self.url}/api/openapi.json", timeout=2)
                return
            except (urllib.error.URLError, OSError):
                time.sleep(0.2)
        raise AssertionError(f"{self.name} did not start in {seconds} s")

    def stop(self) -> None:
        if self.server is not None and self.server.poll() is None:
            self.server.terminate()
            self.server.wait(timeout=20)


@pytest.fixture
def league() -> Iterator[dict[str, Installation]]:
    for databases in _databases():
        x = Installation("x", databases["x"])
        a = Installation("a", databases["a"], exchange_url=x.url)
        b = Installation("b", databases["b"], exchange_url=x.url)
        a.command("migrate", "--no-input", "-v", "0")
        _copy_schema(databases)
        try:
            yield {"a": a, "b": b, "x": x}
        finally:
            for installation in (a, b, x):
                installation.stop()


def _status(url: str) -> int:
    try:
        return urllib.request.urlopen(url, timeout=10).status
    except urllib.error.HTTPError as answered:
        return answered.code


def test_a_league_ban_crosses_clubs_and_the_exchange_learns_no_holder(league) -> None:
    a, b, x = league["a"], league["b"], league["x"]
    # Each installation serves; the exchange enrols the two clubs with their signing keys.
    x.serve("exchange")
    a.serve("serve")
    b.serve("serve")
    x.run("enrol", "Riverside Athletic", "security@riverside.example", a.public_key,
          "Westbrook FC", "security@westbrook.example", b.public_key)  # fmt: skip
    match = b.run("club-b")
    assert match["end"] == "away"
    x.wait_ready()
    # Club A's life ban comes into force: pending at once (bans.hooks), published by the
    # worker's next tick, no command needed (the test servers run no periodic job: by hand).
    banned = a.run("club-a")
    assert a.run("publication")["pending"]
    assert a.run("publish-due") == {"pending": False, "bans": 1}

    # B checks its cup tie: the away ticket's holder is flagged, with A's name and the ban.
    first = b.run("check", str(match["fixture"]))
    assert first["report"] == {
        "holders": 42, "published": 1, "matched": 1, "flagged": 1, "withdrawn": 0
    }  # fmt: skip
    assert first["flags"] == [
        {"ticket": match["ticket"], "status": "open", "club": "Riverside Athletic",
         "kind": "club_ban", "is_life": True, "withdrawn": False},
    ]  # fmt: skip

    # B cannot list A's bans: A's register answers nobody without a login of A's, and what the
    # exchange gives B is tokens with the kind and end: no name, no date of birth.
    a.wait_ready()
    b.wait_ready()
    assert _status(f"{a.url}/api/register/bans?reason=Looking+around") == 401
    seen_by_b = json.dumps(first["published"])
    assert "antw" not in seen_by_b.lower() and "1990" not in seen_by_b
    assert json.loads(seen_by_b)["bans"][0]["club"] == "Riverside Athletic"

    # A's ban is overturned on appeal: withdrawn at the worker's next tick; B's next check no
    # longer flags.
    assert a.run("overturn", str(banned["ban"])) == {"status": "revoked"}
    assert a.run("publish-due") == {"pending": False, "bans": 0}
    second = b.run("check", str(match["fixture"]))
    assert second["report"] == {
        "holders": 42, "published": 0, "matched": 0, "flagged": 0, "withdrawn": 1
    }  # fmt: skip
    assert [(f["status"], f["withdrawn"]) for f in second["flags"]] == [("cleared", True)]

    # A sees the exchange's record of the checks made while its bans were published.
    checks = a.run("against")["checks"]
    assert [(c["club"], c["holders"], c["matched"]) for c in checks] == [
        ("Westbrook FC", 42, 0),
        ("Westbrook FC", 42, 1),
    ]

    # The exchange's database: no holder's name or date of birth, and no token at all now.
    dumped = x.run("dump")
    assert "exchange_holdertoken" not in dumped  # a club's cache: empty at the exchange
    # The schema's own names (a club's HolderToken model, its permissions) are not data.
    schema = {"auth_permission", "django_content_type", "django_migrations"}
    held = json.dumps({table: rows for table, rows in dumped.items() if table not in schema})
    held = held.lower()
    for text in ("vantw", "quellmoor", "1990-04-03", "1991-03-04", "1980-01-02", "holder"):
        assert text not in held, text
    assert not re.search(r"[0-9a-f]{128}", held)
    assert "westbrook fc" in held and '"count": 42' in held  # who asked, and how many
