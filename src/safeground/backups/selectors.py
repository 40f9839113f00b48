"""Reads for backups: the counts a manifest carries, a backup folder against its manifest, and
the checks after a restore."""

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.core.files.storage import Storage, default_storage
from django.db.models import Count

from safeground.casework.models import Case, Evidence, evidence_storage
from safeground.deployment.models import CheckResult
from safeground.entry.models import Scan
from safeground.errors import SafegroundError
from safeground.incidents.checkpoints import Checkpoint, checkpoints_from_path
from safeground.incidents.models import LogCheckpoint, LogEntry, Photo
from safeground.incidents.verify import log_verify
from safeground.matches.models import Fixture

from .manifest import FolderCheck, folder_check, manifest_read


def backup_counts() -> dict[str, Any]:
    """What a person checks a backup by: log entries per match, scans, evidence and the files."""
    per_match = dict(
        LogEntry.objects.values_list("fixture_id").annotate(n=Count("id")).order_by("fixture_id")
    )
    fixtures = Fixture.objects.select_related("home_club", "away_club").in_bulk(list(per_match))
    return {
        "log_entries": {
            str(fixture_id): {"match": str(fixtures[fixture_id]), "entries": entries}
            for fixture_id, entries in per_match.items()
        },
        "checkpoints": LogCheckpoint.objects.count(),
        "scans": Scan.objects.count(),
        "cases": Case.objects.count(),
        "evidence": Evidence.objects.count(),
        "evidence_files": Evidence.objects.exclude(file="").count(),
        "log_photos": Photo.objects.count(),
        "check_photos": CheckResult.objects.exclude(photo="").count(),
    }


@dataclass
class BackupCheck:
    manifest: dict[str, Any]
    found: FolderCheck


def backup_check(*, folder: Path) -> BackupCheck:
    """Every file of a backup folder against its manifest's size and SHA-256: of an encrypted
    backup, the files as stored, so it needs no key (a copy off the server can be checked)."""
    manifest = manifest_read(folder)
    return BackupCheck(manifest, folder_check(folder, manifest))


@dataclass
class RestoredCheck:
    """What the restored system verified, and each thing that did not."""

    matches: int = 0
    entries: int = 0
    checkpoints: int = 0
    files: int = 0  # evidence files and photos whose SHA-256 matched
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def _sha256_of(storage: Storage, name: str) -> str | None:
    try:
        with storage.open(name, "rb") as f:
            digest = hashlib.sha256()
            for chunk in iter(lambda: f.read(1 << 20), b""):
                digest.update(chunk)
            return digest.hexdigest()
    except (OSError, ValueError):
        return None


def _files_check(
    check: RestoredCheck, storage: Storage, rows: Iterable[tuple[str, str | None, str]]
) -> None:
    for what, name, sha256 in rows:
        found = _sha256_of(storage, name) if name else None
        if found is None:
            check.problems.append(f"{what}: its file {name} is missing")
        elif found != sha256:
            check.problems.append(f"{what}: {name} does not match its SHA-256 ({sha256})")
        else:
            check.files += 1


def restored_check(*, checkpoint_folder: Path | None, counts: dict[str, Any]) -> RestoredCheck:
    """Every match's log chain against its checkpoints (the database's and the restored files),
    every evidence file and photo against its stored SHA-256, and the counts against the
    manifest's."""
    check = RestoredCheck()
    held: list[Checkpoint] = []
    if checkpoint_folder is not None and checkpoint_folder.is_dir():
        try:
            held = checkpoints_from_path(checkpoint_folder)
        except SafegroundError as error:
            check.problems.append(f"checkpoint files: {error.message}")
    ids = set(LogEntry.objects.values_list("fixture_id", flat=True).distinct().order_by())
    ids |= set(LogCheckpoint.objects.values_list("fixture_id", flat=True).distinct().order_by())
    ids |= {checkpoint.fixture_id for checkpoint in held}
    for fixture_id in sorted(ids):
        log = log_verify(fixture_id, held)
        check.matches += 1
        check.entries += log.entries
        check.checkpoints += log.checkpoints
        for problem in log.problems:
            check.problems.append(
                f"the log of match {fixture_id}: {problem.code}: {problem.message}"
            )
    evidence = Evidence.objects.exclude(file="").order_by("pk")
    _files_check(
        check,
        evidence_storage(),
        ((f"evidence #{e.pk}", e.file.name, e.sha256) for e in evidence.only("file", "sha256")),
    )
    _files_check(
        check,
        default_storage,
        ((f"log photo #{p.pk}", p.image.name, p.sha256) for p in Photo.objects.order_by("pk")),
    )
    results = CheckResult.objects.exclude(photo="").order_by("pk").only("photo", "photo_sha256")
    _files_check(
        check,
        default_storage,
        ((f"check photo #{r.pk}", r.photo.name, r.photo_sha256) for r in results),
    )
    now = backup_counts()
    for key in sorted(set(counts) | set(now)):
        if counts.get(key) != now.get(key):
            check.problems.append(
                f"counts: {key} is {now.get(key)!r} here, {counts.get(key)!r} in the manifest"
            )
    return check
