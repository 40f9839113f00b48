"""Encrypted backups (age, through pyrage): `safeground backup DIR --recipient age1...` writes
every file encrypted, with a readable manifest of hashes; `safeground restore DIR --identity FILE`
decrypts and restores into an empty system (a fresh SQLite file, or a new PostgreSQL database
when DATABASE_URL is set) by the real command, and verifies; a missing, wrong or malformed key
and a malformed recipient are refused by name with nothing written."""

import hashlib
import io
import json
import subprocess
from contextlib import redirect_stderr
from pathlib import Path

import pyrage
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from pyrage import x25519

from safeground.incidents.models import LogEntry
from tests import factories
from tests.backups.conftest import restored_rows, safeground

pytestmark = pytest.mark.django_db(transaction=True)

# Fictional data that must never be readable in an encrypted backup.
SUPPORTER = ("Quillon", "Marchbanks-Testcase")
LOG_TEXT = "Green flare lit by the canary-7731 group at the corner flag"
FILE_NAME = "marchbanks-testcase-face.png"
FILE_BYTES = factories.PNG + b"canary-file-content-7731"


def key_pair(folder: Path, name: str = "backup-key.txt") -> tuple[Path, str]:
    """A key made by `safeground backup-key`: its file and the public key it printed."""
    out = io.StringIO()
    with redirect_stderr(io.StringIO()):
        call_command("backup_key", str(folder / name), stdout=out)
    return folder / name, out.getvalue().strip()


@pytest.fixture
def marked(recorded, match_day) -> dict:
    """The recorded matches, plus a supporter on the register, a log entry and an evidence file
    (named after the supporter) whose text must not be found in an encrypted backup."""
    factories.person(match_day.cast.home, first_names=SUPPORTER[0], last_name=SUPPORTER[1])
    entry = factories.report(match_day.cup_tie, text=LOG_TEXT)
    case = factories.case(match_day.cup_tie, entries=[entry])
    marked = factories.evidence(case, upload=factories.upload(FILE_NAME, FILE_BYTES))
    return {**recorded, "marked_evidence": marked}


@pytest.fixture
def encrypted(marked, tmp_path) -> dict:
    """The marked system backed up into tmp_path/encrypted, to a key made for the test."""
    identity, public = key_pair(tmp_path)
    folder = tmp_path / "encrypted"
    call_command("backup", str(folder), recipient=[public], stdout=io.StringIO())
    return {**marked, "folder": folder, "identity": identity, "public": public}


def plaintext_database(folder: Path, manifest: dict, identity: Path) -> bytes:
    """The backup's database decrypted with the key, as bytes where its text can be found (a
    PostgreSQL dump is compressed: pg_restore prints its data as SQL)."""
    sealed = folder / manifest["database"]["file"]
    key = x25519.Identity.from_str(identity.read_text().splitlines()[-1])
    plain = pyrage.decrypt(sealed.read_bytes(), [key])
    if connection.vendor == "sqlite":
        return plain
    dump = folder.parent / "decrypted.pgdump"
    dump.write_bytes(plain)
    return subprocess.run(
        ["pg_restore", "--data-only", "--file=-", str(dump)], capture_output=True, check=True
    ).stdout


def test_an_encrypted_backup_holds_no_plaintext_and_restores_with_its_key(
    encrypted, empty_system, tmp_path
) -> None:
    folder = encrypted["folder"]
    on_disk = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    assert "manifest.json" in on_disk
    assert all(name.endswith(".age") for name in on_disk if name != "manifest.json")

    # Nothing of the supporter, the log or the evidence file is readable: not in the files, not
    # in the manifest (whose file names are numbers; the real names are encrypted too).
    markers = [m.encode() for m in (*SUPPORTER, LOG_TEXT, FILE_NAME, "canary-file-content")]
    for name in on_disk:
        data = (folder / name).read_bytes()
        assert not [m for m in markers if m in data], name
    # ...while the same backup, decrypted with the key, holds them.
    manifest = json.loads((folder / "manifest.json").read_text())
    database = plaintext_database(folder, manifest, encrypted["identity"])
    assert SUPPORTER[1].encode() in database and LOG_TEXT.encode() in database

    assert manifest["format_version"] == 2
    assert manifest["encryption"]["recipients"] == [encrypted["public"]]
    assert manifest["counts"]["evidence_files"] == 2
    for one in manifest["files"]:
        stored = (folder / one["path"]).read_bytes()
        assert (one["size"], one["sha256"]) == (len(stored), hashlib.sha256(stored).hexdigest())
    marked_file = next(
        f for f in manifest["files"] if f["plaintext_sha256"] == encrypted["marked_evidence"].sha256
    )
    assert marked_file["plaintext_size"] == len(FILE_BYTES)

    # The decrypted copy lives in a private temporary folder (TMPDIR), gone after the restore.
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    empty_system["env"]["TMPDIR"] = str(scratch)
    done = safeground(
        empty_system, "restore", str(folder), "--identity", str(encrypted["identity"])
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "every log chain, checkpoint, file and count verifies" in done.stdout
    assert list(scratch.iterdir()) == []
    assert restored_rows(empty_system, "SELECT COUNT(*) FROM incidents_logentry") == [
        (LogEntry.objects.count(),)
    ]
    assert restored_rows(
        empty_system, "SELECT last_name FROM bans_person WHERE first_names = 'Quillon'"
    ) == [(SUPPORTER[1],)]
    evidence = encrypted["marked_evidence"]
    assert (empty_system["media"] / evidence.file.name).read_bytes() == FILE_BYTES


def refused(result: subprocess.CompletedProcess, message: str) -> None:
    assert result.returncode != 0
    assert message in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


def assert_still_empty(system: dict) -> None:
    if "sqlite" in system:
        tables = restored_rows(system, "SELECT name FROM sqlite_master WHERE type='table'")
    else:
        tables = restored_rows(system, "SELECT tablename FROM pg_tables WHERE schemaname='public'")
    assert tables == []
    assert not system["media"].exists() or not any(system["media"].rglob("*"))


def test_verify_backup_checks_an_encrypted_backup_without_the_key(encrypted) -> None:
    out = io.StringIO()
    call_command("verify_backup", str(encrypted["folder"]), stdout=out)
    files = len(json.loads((encrypted["folder"] / "manifest.json").read_text())["files"])
    assert f"encrypted (age) to {encrypted['public']}, checked as stored" in out.getvalue()
    assert f"{files} file(s) match their size and SHA-256" in out.getvalue()


def test_a_missing_wrong_or_malformed_identity_is_refused_and_nothing_is_restored(
    encrypted, empty_system, tmp_path
) -> None:
    folder = str(encrypted["folder"])
    refused(
        safeground(empty_system, "restore", folder),
        f"is encrypted (age, to {encrypted['public']}): give the private key",
    )
    other, other_public = key_pair(tmp_path, "other-key.txt")
    refused(
        safeground(empty_system, "restore", folder, "--identity", str(other)),
        f"the key in {other} ({other_public}) is not one {folder} was encrypted to",
    )
    refused(
        safeground(empty_system, "restore", folder, "--identity", str(tmp_path / "nowhere")),
        "no such identity file",
    )
    public_only = tmp_path / "public.txt"
    public_only.write_text(encrypted["public"] + "\n")
    refused(
        safeground(empty_system, "restore", folder, "--identity", str(public_only)),
        "is a public key (age1...): restore needs the private key",
    )
    garbled = tmp_path / "garbled.txt"
    garbled.write_text("# a comment\nAGE-SECRET-KEY-1NOTAKEY\n")
    refused(
        safeground(empty_system, "restore", folder, "--identity", str(garbled)),
        f"{garbled} line 2 is not an age private key",
    )
    binary = tmp_path / "binary.key"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    refused(
        safeground(empty_system, "restore", folder, "--identity", str(binary)),
        "is not an age identity file (not text)",
    )
    refused(
        safeground(empty_system, "restore", folder, "--identity", str(tmp_path)),
        "is a folder: give the identity file",
    )
    assert_still_empty(empty_system)


def test_a_changed_encrypted_file_is_refused_by_name_and_nothing_is_restored(
    encrypted, empty_system
) -> None:
    folder = encrypted["folder"]
    manifest = json.loads((folder / "manifest.json").read_text())
    photo = next(f for f in manifest["files"] if f["path"].startswith("files/"))
    stored = folder / photo["path"]
    data = bytearray(stored.read_bytes())
    data[-1] ^= 0x01
    stored.write_bytes(bytes(data))
    # Found without the key, by the check a copy off the server gets.
    with pytest.raises(CommandError, match="does not match its manifest"):
        call_command(
            "verify_backup", str(folder), stdout=io.StringIO(), stderr=(err := io.StringIO())
        )
    assert f"DOES NOT MATCH: {photo['path']}" in err.getvalue()
    identity = ("--identity", str(encrypted["identity"]))
    refused(
        safeground(empty_system, "restore", str(folder), *identity),
        f"DOES NOT MATCH: {photo['path']}",
    )
    # With the readable manifest made to agree, age's own authentication still refuses it.
    photo["sha256"] = hashlib.sha256(bytes(data)).hexdigest()
    (folder / "manifest.json").write_text(json.dumps(manifest))
    refused(
        safeground(empty_system, "restore", str(folder), *identity),
        f"cannot decrypt {folder / photo['path']}",
    )
    assert_still_empty(empty_system)


def test_a_plain_backup_given_an_identity_is_refused(backed_up, empty_system, tmp_path) -> None:
    identity, _ = key_pair(tmp_path)
    refused(
        safeground(empty_system, "restore", str(backed_up["folder"]), "--identity", str(identity)),
        "is not encrypted: restore it without --identity",
    )
    assert_still_empty(empty_system)


def test_a_malformed_recipient_is_refused_before_anything_is_written(recorded, tmp_path) -> None:
    folder = tmp_path / "backup"
    with pytest.raises(CommandError, match="'age1notakey' is not an age public key"):
        call_command("backup", str(folder), recipient=["age1notakey"])
    identity, _ = key_pair(tmp_path)
    private = identity.read_text().splitlines()[-1]
    with pytest.raises(CommandError, match=r"a private key .* was given as a recipient") as error:
        call_command("backup", str(folder), recipient=[private])
    assert private not in str(error.value)  # a secret is not repeated into logs
    assert not folder.exists()


def test_the_setting_and_the_option_are_both_recipients(recorded, tmp_path, settings) -> None:
    standing, standing_public = key_pair(tmp_path, "standing.txt")
    extra, extra_public = key_pair(tmp_path, "extra.txt")
    settings.SAFEGROUND_BACKUP_RECIPIENTS = [standing_public]
    folder = tmp_path / "backup"
    out = io.StringIO()
    call_command("backup", str(folder), recipient=[extra_public], stdout=out)
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["encryption"]["recipients"] == [standing_public, extra_public]
    assert "this server cannot read it back" in out.getvalue()
    # Either private key opens it.
    for identity in (standing, extra):
        key = x25519.Identity.from_str(identity.read_text().splitlines()[-1])
        contents = json.loads(pyrage.decrypt((folder / "contents.json.age").read_bytes(), [key]))
        assert contents["format_version"] == 1
        assert {f["stored_as"] for f in contents["files"]} == {
            f["path"] for f in manifest["files"] if f["path"] != "contents.json.age"
        }


def test_backup_key_writes_a_private_key_only_its_owner_reads(tmp_path) -> None:
    identity, public = key_pair(tmp_path)
    assert identity.stat().st_mode & 0o777 == 0o600
    lines = identity.read_text().splitlines()
    assert lines[1] == f"# public key: {public}"
    key = x25519.Identity.from_str(lines[-1])
    assert str(key.to_public()) == public
    before = identity.read_bytes()
    with pytest.raises(CommandError, match="exists: give a new file"):
        key_pair(tmp_path)
    assert identity.read_bytes() == before  # an existing key is never overwritten
