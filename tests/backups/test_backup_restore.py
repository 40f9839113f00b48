"""`safeground backup DIR` and `safeground restore DIR`: a match's log, a case's evidence, a
steward's photo and a signed checkpoint backed up, restored into an empty system (a fresh SQLite
file, or a freshly created PostgreSQL database when DATABASE_URL is set) by the real command in
a process of its own, and verified; a tampered backup, a non-empty target and bad arguments
refused by name."""

import hashlib
import json
import os
import subprocess
import sys

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection

from safeground.backups.services import file_sources
from safeground.casework.models import Evidence
from safeground.incidents.models import LogEntry
from tests.backups.conftest import restored_rows, safeground, schema_into

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_backup_restores_into_an_empty_system_and_verifies(backed_up, empty_system) -> None:
    folder = backed_up["folder"]
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["database"]["vendor"] == connection.vendor
    cup = str(backed_up["cup"].pk)
    assert manifest["counts"]["log_entries"][cup]["entries"] == 4  # the case opened on 2 of them
    assert manifest["counts"]["evidence_files"] == 1
    assert manifest["counts"]["log_photos"] == 1
    assert manifest["counts"]["checkpoints"] == 1
    listed = {f["path"] for f in manifest["files"]}
    evidence = backed_up["evidence"]
    assert f"files/media/{evidence.file.name}" in listed
    assert any(p.startswith("files/checkpoints/") for p in listed)

    done = safeground(empty_system, "restore", str(folder))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "every log chain, checkpoint, file and count verifies" in done.stdout

    # The restored log, counted in the restored database itself, is the one backed up.
    per_match = restored_rows(
        empty_system,
        "SELECT fixture_id, COUNT(*) FROM incidents_logentry GROUP BY fixture_id ORDER BY 1",
    )
    assert per_match == sorted(
        (f, LogEntry.objects.filter(fixture_id=f).count())
        for f in LogEntry.objects.order_by().values_list("fixture_id", flat=True).distinct()
    )
    restored_file = empty_system["media"] / evidence.file.name
    with evidence.file.open("rb") as original:
        assert restored_file.read_bytes() == original.read()
    # The chain and the restored checkpoint files verify with the ordinary command too. (The
    # league match's report was never signed, no anchoring job having run: verify-log fails that
    # finished match, rightly, so only the cup tie is asked for.)
    verified = safeground(
        empty_system,
        "verify-log",
        "--match",
        str(cup),
        "--checkpoints",
        str(empty_system["checkpoints"]),
    )
    assert verified.returncode == 0, verified.stderr
    assert f"match {cup} " in verified.stdout and "1 signed checkpoint(s) agree" in verified.stdout

    # Restoring again is refused: the system now holds Safeground data.
    again = safeground(empty_system, "restore", str(folder))
    assert again.returncode != 0
    assert "already holds Safeground data" in again.stderr
    assert "Traceback" not in again.stderr


def test_a_migrated_but_empty_database_takes_a_restore(backed_up, empty_system) -> None:
    schema_into(empty_system)
    assert restored_rows(empty_system, "SELECT COUNT(*) FROM incidents_logentry") == [(0,)]
    done = safeground(empty_system, "restore", str(backed_up["folder"]))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "every log chain, checkpoint, file and count verifies" in done.stdout
    assert restored_rows(empty_system, "SELECT COUNT(*) FROM incidents_logentry") == [
        (LogEntry.objects.count(),)
    ]


def test_a_restore_that_does_not_verify_exits_non_zero_naming_it(backed_up, empty_system):
    # A backup consistent with its manifest, holding a checkpoint file whose signed head was
    # altered before the backup was made: the restore goes through, the verification fails.
    folder = backed_up["folder"]
    signed = next((folder / "files" / "checkpoints").rglob("*.json"))
    altered = json.loads(signed.read_text())
    altered["statement"]["head"] = "0" * 64
    forged = signed.with_name("checkpoint-forged.json")
    forged.write_text(json.dumps(altered))
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["files"].append(
        {"path": forged.relative_to(folder).as_posix(), "size": forged.stat().st_size,
         "sha256": hashlib.sha256(forged.read_bytes()).hexdigest()}
    )  # fmt: skip
    (folder / "manifest.json").write_text(json.dumps(manifest))
    done = safeground(empty_system, "restore", str(folder))
    assert done.returncode == 1
    assert "bad_signature" in done.stderr and "checkpoint-forged.json" in done.stderr
    assert "the restored system does not verify" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_tampered_file_is_refused_by_name_and_nothing_is_restored(backed_up) -> None:
    folder = backed_up["folder"]
    still = folder / "files" / "media" / backed_up["evidence"].file.name
    data = bytearray(still.read_bytes())
    data[-1] ^= 0x01
    still.write_bytes(bytes(data))
    checkpoint = next((folder / "files" / "checkpoints").rglob("*.json"))
    checkpoint.unlink()
    before = LogEntry.objects.count()
    with pytest.raises(CommandError) as refused:
        call_command("restore", str(folder))
    message = str(refused.value)
    assert f"DOES NOT MATCH: files/media/{backed_up['evidence'].file.name}" in message
    assert f"MISSING: {checkpoint.relative_to(folder).as_posix()}" in message
    assert "nothing was restored" in message
    assert LogEntry.objects.count() == before


def test_a_database_that_holds_safeground_data_is_refused_by_name(backed_up) -> None:
    with pytest.raises(CommandError) as refused:
        call_command("restore", str(backed_up["folder"]))
    message = str(refused.value)
    assert f"the database {connection.settings_dict['NAME']} already holds Safeground data" in (
        message
    )
    assert "incidents_logentry" in message
    assert Evidence.objects.count() == 1


def test_a_damaged_database_copy_leaves_the_target_as_it_was(backed_up, empty_system) -> None:
    folder = backed_up["folder"]
    manifest = json.loads((folder / "manifest.json").read_text())
    database = folder / manifest["database"]["file"]
    data = bytearray(database.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 4096] = b"\xff" * 4096  # damage the copy, then make the manifest agree
    database.write_bytes(bytes(data))
    for one in manifest["files"]:
        if one["path"] == manifest["database"]["file"]:
            one["sha256"] = hashlib.sha256(bytes(data)).hexdigest()
    (folder / "manifest.json").write_text(json.dumps(manifest))

    done = safeground(empty_system, "restore", str(folder))
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    assert "restored" not in done.stdout
    # No table, no file: the empty system is still empty.
    if "sqlite" in empty_system:
        tables = restored_rows(empty_system, "SELECT name FROM sqlite_master WHERE type='table'")
    else:
        tables = restored_rows(
            empty_system, "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
        )
    assert tables == []
    assert not any(p.is_file() for p in empty_system["media"].parent.rglob("*.png"))


def test_bad_arguments_and_folders_get_clear_errors(backed_up, tmp_path) -> None:
    with pytest.raises(CommandError, match="no such folder"):
        call_command("restore", str(tmp_path / "nowhere"))
    with pytest.raises(CommandError, match=r"has no manifest\.json"):
        call_command("restore", str(tmp_path))
    with pytest.raises(CommandError, match="arguments are required: dir"):
        call_command("restore")
    with pytest.raises(CommandError, match="is not empty"):
        call_command("backup", str(backed_up["folder"]))
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    with pytest.raises(CommandError, match="is a file"):
        call_command("backup", str(a_file))
    done = subprocess.run(
        [sys.executable, "-m", "safeground.cli", "restore", str(tmp_path / "nowhere")],
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "safeground.settings.test"},
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 1
    assert "no such folder" in done.stderr and "Traceback" not in done.stderr


def test_evidence_kept_off_a_folder_is_named_and_left_out(settings) -> None:
    settings.STORAGES = {
        **settings.STORAGES,
        "evidence": {"BACKEND": "django.core.files.storage.InMemoryStorage"},
    }
    evidence = next(s for s in file_sources() if s.name == "evidence")
    assert evidence.location is None
    assert "not included: the evidence storage is" in evidence.note
    assert "InMemoryStorage" in evidence.note
