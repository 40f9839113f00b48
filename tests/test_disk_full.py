"""A full disk mid-match (issue 40, item 4): each write is answered 503 with Retry-After and a
message saying nothing was stored, nothing is half-written (the log's chain verifies, no evidence
file without its record or the reverse), reads go on, and the same requests succeed once space
returns.

The disks are real: two small tmpfs file systems mounted for the test, one holding the SQLite
database (a copy of the test database, made once the test's data is in it), one the media folder
(the evidence locker and the log's photos), each filled to the last byte with a ballast file and
emptied again by deleting it. On PostgreSQL the database's side is the server refusing writes:
`ALTER DATABASE ... SET default_transaction_read_only = on` from a connection of the test's own,
the pool closed so that every new connection has it (what a standby or a server protecting its
disk answers: sqlstate 25006, as 53100 "could not extend file" is). Mounting needs root (or
CAP_SYS_ADMIN): elsewhere these tests skip and say so.
"""

import errno
import hashlib
import os
import shutil
import sqlite3
import subprocess
import uuid
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import psycopg
import pytest
from django.db import connection
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from safeground.accounts.models import User
from safeground.casework.models import Evidence
from safeground.deployment.models import CheckResult
from safeground.disk_full import storage_full
from safeground.entry.runtime import lookups
from safeground.incidents.models import LogEntry, Photo
from safeground.incidents.verify import chain_verify
from safeground.matches.models import Fixture
from tests import factories

pytestmark = pytest.mark.django_db(transaction=True)

BALLAST_CHUNK = 64 * 1024
REFUSED_WORDS = "cannot store"  # in the 503's message, as a person reads it


class SmallDisk:
    """A tmpfs of `megabytes`, filled and emptied with a ballast file."""

    def __init__(self, path: Path, megabytes: int) -> None:
        self.path = path
        path.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={megabytes}m", "tmpfs", str(path)],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            pytest.skip(f"a small disk needs a tmpfs mount (root): {done.stderr.strip()}")
        self.ballast = path / "ballast"

    def fill(self) -> None:
        """Write until the file system has no byte left (unbuffered: each write as far as it
        goes, then smaller ones for the last bytes)."""
        fd = os.open(self.ballast, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        try:
            size = BALLAST_CHUNK
            while size:
                try:
                    os.write(fd, b"\0" * size)
                except OSError as error:
                    assert error.errno == errno.ENOSPC
                    size //= 2
        finally:
            os.close(fd)

    def free(self) -> None:
        self.ballast.unlink(missing_ok=True)

    def unmount(self) -> None:
        subprocess.run(["umount", "-l", str(self.path)], check=False)


class Ground:
    """Where the match's writes go: the database (SQLite on its own small disk, or PostgreSQL)
    and the media folder on a small disk; each can be made to refuse writes and given back."""

    def __init__(self, tmp: Path, settings) -> None:
        self.media = SmallDisk(tmp / "media", 8)
        settings.MEDIA_ROOT = str(self.media.path)
        self.sqlite = connection.vendor == "sqlite"
        self.db_disk: SmallDisk | None = None
        self._name = connection.settings_dict["NAME"]
        self._read_only = False

    def database_onto_small_disk(self, tmp: Path) -> None:
        """SQLite: the test database, as it is now, copied onto a small disk and used from there
        (its WAL emptied first, so every later write needs new space)."""
        if not self.sqlite:
            return
        connection.close()
        with sqlite3.connect(self._name) as source:
            source.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        size = Path(self._name).stat().st_size
        self.db_disk = SmallDisk(tmp / "db", size // (1024 * 1024) + 8)
        copy = self.db_disk.path / "safeground.sqlite3"
        shutil.copyfile(self._name, copy)
        connection.settings_dict["NAME"] = str(copy)

    def refuse(self, *, database: bool, files: bool) -> None:
        if files:
            self.media.fill()
        if database:
            if self.db_disk is not None:
                self.db_disk.fill()
            else:
                self._postgres_read_only(True)

    def restore(self) -> None:
        self.media.free()
        if self.db_disk is not None:
            self.db_disk.free()
        elif self._read_only:
            self._postgres_read_only(False)

    def _postgres_read_only(self, on: bool) -> None:
        params = connection.get_connection_params()
        params.pop("cursor_factory", None)
        params.pop("context", None)
        params["dbname"] = "postgres"
        with psycopg.connect(**params, autocommit=True) as admin:
            verb = "SET default_transaction_read_only = on" if on else "RESET ALL"
            admin.execute(f'ALTER DATABASE "{self._name}" {verb}')
        self._read_only = on
        connection.close()
        connection.close_pool()  # every connection from now on has the database's setting

    def close(self) -> None:
        self.restore()
        connection.close()
        connection.settings_dict["NAME"] = self._name
        if self.db_disk is not None:
            self.db_disk.unmount()
        self.media.unmount()


@pytest.fixture
def ground(tmp_path, settings) -> Iterator[Ground]:
    made = Ground(tmp_path, settings)
    try:
        yield made
    finally:
        made.close()


@pytest.fixture
def day(ground, tmp_path, settings, no_second_factor):
    """A match day with a report, a case, a scanner and a ticket, the database then moved onto
    its small disk."""
    day = factories.match_day()
    cup = day.cup_tie
    # Kick-off in half an hour: the scanners' bundle is for the match on now.
    Fixture.objects.filter(pk=cup.pk).update(kickoff=timezone.now() + timedelta(minutes=30))
    cup.refresh_from_db()
    report = factories.report(cup)
    case = factories.case(cup, entries=[report])
    factories.ticket(cup, barcode="AWAY-1", block="S-L2", end="away")
    factories.post(cup, day.cast["steward"])
    away = cup.zones.get(use="away").zone
    check = next(c for c in factories.checks(cup) if c.zone_id == away.pk)
    _device, key = factories.device(day.cast.home)
    lookups.caches_clear()
    ground.database_onto_small_disk(tmp_path)
    return {"day": day, "cup": cup, "report": report, "case": case, "key": key, "check": check}


def _client(username: str) -> Client:
    return factories.logged_in(User.objects.get(username=username))


def _report(steward: Client, cup, key: str):
    return steward.post(
        f"/api/fixtures/{cup.pk}/log",
        {"category": "missile", "text": "coin thrown", "block": "S-L2", "idempotency_key": key},
        content_type="application/json",
    )


def _scan(day, nonce: str):
    return Client().post(
        "/api/entry/scan",
        {
            "barcode": "AWAY-1",
            "turnstile": "F03",
            "scanned_at": timezone.now().isoformat(),
            "nonce": nonce,
        },
        content_type="application/json",
        headers={"X-Device-Key": day["key"]},
    )


def _evidence(officer: Client, case):
    return officer.post(
        reverse("case_evidence_add", args=[case.pk]),
        {"kind": "photo", "file": factories.upload(), "description": "still from the stand"},
    )


def _photo(loggist: Client, cup, entry_id: int):
    return loggist.post(
        f"/api/fixtures/{cup.pk}/log/{entry_id}/photo", {"photo": factories.upload("p.png")}
    )


def _check_photo(steward: Client, cup, check):
    return steward.post(
        reverse("deployment_check_record", args=[cup.pk, check.pk]),
        {"outcome": "fail", "note": "Rail loose by row K", "photo": factories.upload("rail.png")},
    )


def _refused_for_want_of_space(answer) -> None:
    assert answer.status_code == 503, answer.content[:300]
    assert answer["Retry-After"] == "2"
    text = answer.content.decode()
    assert REFUSED_WORDS in text or "disk is full" in text, text[:300]


def _files(root: Path) -> set[str]:
    return {
        str(path.relative_to(root))
        for path in root.rglob("*")
        if path.is_file() and path.name != "ballast"
    }


def _kept_files_match_their_records(ground: Ground) -> None:
    """Every evidence file and photo on the disk has its record, and every record its whole
    file (its SHA-256 agrees)."""
    root = Path(ground.media.path)
    recorded = {e.file.name: e.sha256 for e in Evidence.objects.exclude(file="")}
    recorded |= {p.image.name: p.sha256 for p in Photo.objects.all()}
    recorded |= {r.photo.name: r.photo_sha256 for r in CheckResult.objects.exclude(photo="")}
    assert _files(root) == set(recorded)
    for name, sha256 in recorded.items():
        assert hashlib.sha256((root / name).read_bytes()).hexdigest() == sha256


def _nothing_stored_from(before: dict[str, int]) -> None:
    assert _counts() == before


def _counts() -> dict[str, int]:
    from safeground.entry.models import Scan

    return {
        "entries": LogEntry.objects.count(),
        "evidence": Evidence.objects.count(),
        "photos": Photo.objects.count(),
        "scans": Scan.objects.count(),
        "checks": CheckResult.objects.count(),
    }


def test_a_full_disk_refuses_every_write_with_a_503_and_the_match_resumes_when_space_returns(
    day, ground
) -> None:
    cup, report, case = day["cup"], day["report"], day["case"]
    steward, loggist, officer = _client("steward"), _client("loggist"), _client("banofficer")
    key, nonce = f"disk-{uuid.uuid4()}", str(uuid.uuid4())
    before = _counts()

    ground.refuse(database=True, files=True)
    # Every write: refused for want of space, saying so, with Retry-After; nothing stored.
    _refused_for_want_of_space(_report(steward, cup, key))
    _refused_for_want_of_space(_scan(day, nonce))
    _refused_for_want_of_space(_evidence(officer, case))
    _refused_for_want_of_space(_photo(loggist, cup, report.pk))
    # Reads go on: the control room's log (its API and its page) and the scanners' bundle.
    log = loggist.get(f"/api/fixtures/{cup.pk}/log")
    assert log.status_code == 200 and [e["seq"] for e in log.json()["entries"]] == [report.seq]
    assert loggist.get(reverse("control_room", args=[cup.pk])).status_code == 200
    bundle = Client().get(
        "/api/entry/bundle", {"turnstile": "F03"}, headers={"X-Device-Key": day["key"]}
    )
    assert bundle.status_code == 200
    _nothing_stored_from(before)
    _kept_files_match_their_records(ground)

    ground.restore()
    # The same requests again, as the phone's outbox and the scanner send them: stored once.
    stored = _report(steward, cup, key)
    assert stored.status_code == 201
    assert _report(steward, cup, key).json()["seq"] == stored.json()["seq"]
    assert _scan(day, nonce).json()["decision"] == "admit"
    assert _evidence(officer, case).status_code == 302
    assert _photo(loggist, cup, report.pk).status_code == 201
    assert _counts() == dict(
        before,
        entries=before["entries"] + 2,  # the report and the photo's record in the chain
        evidence=before["evidence"] + 1,
        photos=before["photos"] + 1,
        scans=before["scans"] + 1,
    )
    assert chain_verify(cup.pk) == (before["entries"] + 2, None)
    _kept_files_match_their_records(ground)


def test_a_database_refusing_writes_leaves_no_file_without_its_record(day, ground) -> None:
    """The file is written first, then its record: when the record fails the file goes too."""
    cup, report, case = day["cup"], day["report"], day["case"]
    steward, loggist, officer = _client("steward"), _client("loggist"), _client("banofficer")
    before = _counts()

    ground.refuse(database=True, files=False)
    _refused_for_want_of_space(_evidence(officer, case))
    _refused_for_want_of_space(_photo(loggist, cup, report.pk))
    # The steward's panel shows a refusal in place (htmx swaps only a 2xx): the same words.
    panel = _check_photo(steward, cup, day["check"])
    assert REFUSED_WORDS in panel.content.decode()
    _nothing_stored_from(before)
    _kept_files_match_their_records(ground)  # no file left behind on the media disk

    ground.restore()
    assert _evidence(officer, case).status_code == 302
    assert _photo(loggist, cup, report.pk).status_code == 201
    assert _check_photo(steward, cup, day["check"]).status_code == 200
    assert _counts()["checks"] == before["checks"] + 1
    _kept_files_match_their_records(ground)
    assert chain_verify(cup.pk) == (before["entries"] + 1, None)


def test_a_full_evidence_folder_stores_no_record_and_no_part_of_a_file(day, ground) -> None:
    """The media disk full, the database not: uploads are refused (no record, no partial file
    left), and reports, which need no file, are stored as ever."""
    cup, report, case = day["cup"], day["report"], day["case"]
    steward, loggist, officer = _client("steward"), _client("loggist"), _client("banofficer")
    before = _counts()

    ground.refuse(database=False, files=True)
    _refused_for_want_of_space(_evidence(officer, case))
    _refused_for_want_of_space(_photo(loggist, cup, report.pk))
    _kept_files_match_their_records(ground)
    assert _report(steward, cup, f"disk-{uuid.uuid4()}").status_code == 201
    assert _counts() == dict(before, entries=before["entries"] + 1)

    ground.restore()
    assert _photo(loggist, cup, report.pk).status_code == 201
    _kept_files_match_their_records(ground)
    assert chain_verify(cup.pk) == (before["entries"] + 2, None)


def test_what_counts_as_no_space() -> None:
    """The errors the server answers 503 for want of space, and others it does not."""
    assert storage_full(OSError(errno.ENOSPC, "No space left on device"))
    assert storage_full(OSError(errno.EDQUOT, "Disk quota exceeded"))
    assert not storage_full(OSError(errno.EACCES, "Permission denied"))
    full = sqlite3.connect(":memory:")
    full.execute("CREATE TABLE t (x)")
    full.execute("PRAGMA max_page_count = 1")
    with pytest.raises(sqlite3.OperationalError) as raised:
        full.execute("INSERT INTO t VALUES (randomblob(100000))")
    assert storage_full(raised.value)
    assert not storage_full(sqlite3.OperationalError("no such table: t"))
    # PostgreSQL's "could not extend file ... No space left on device" and a read-only database
    assert storage_full(psycopg.errors.DiskFull("could not extend file"))
    assert storage_full(psycopg.errors.ReadOnlySqlTransaction("read-only transaction"))
    assert not storage_full(psycopg.errors.UniqueViolation("duplicate key"))
