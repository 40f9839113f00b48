"""Backup and restore: the database, the files beside it, and a manifest of hashes.

`backup_make` writes the database copy, then the files, then the manifest (last: a folder
without one is incomplete). `backup_restore` checks every file against the manifest and the
target for emptiness before it changes anything, stages the files beside their folders, restores
the database whole (database.py), moves the files in, then verifies the restored system
(selectors.restored_check).
"""

import os
import shutil
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from django.core.files.storage import FileSystemStorage, Storage, storages

from safeground.casework.models import evidence_storage
from safeground.incidents.checkpoints import checkpoint_storage

from .database import database_check_restorable, database_dump, database_name, database_restore
from .manifest import (
    FILES,
    FORMAT,
    FORMAT_VERSION,
    BackupError,
    file_entry,
    file_sha256,
    folder_check,
    manifest_read,
    manifest_write,
)
from .selectors import RestoredCheck, backup_counts, restored_check


@dataclass(frozen=True)
class FileSource:
    """A place files are kept: included as a folder, or left out with the reason."""

    name: str  # media, evidence, checkpoints: the folder under DIR/files/
    location: Path | None  # the folder, when the storage is one and is backed up on its own
    note: str = ""  # why it is left out, or which source holds it


def _folder_of(storage: Storage) -> Path | None:
    return Path(storage.location).resolve() if isinstance(storage, FileSystemStorage) else None


def file_sources() -> list[FileSource]:
    """MEDIA_ROOT (photos of the log, the checks and the register; evidence by default), the
    evidence storage when it is elsewhere, and the checkpoint files."""
    sources: list[FileSource] = []
    named = [
        ("media", storages["default"]),
        ("evidence", evidence_storage()),
        ("checkpoints", checkpoint_storage()),
    ]
    for name, storage in named:
        folder = _folder_of(storage)
        if folder is None:
            backend = f"{type(storage).__module__}.{type(storage).__name__}"
            bucket = getattr(storage, "bucket_name", "")
            where = f"{backend}" + (f" (bucket {bucket})" if bucket else "")
            sources.append(
                FileSource(
                    name,
                    None,
                    f"not included: the {name} storage is {where}, not a folder; back it up with"
                    " the storage's own tools (bucket versioning or replication)",
                )
            )
            continue
        inside = next(
            (s for s in sources if s.location and folder.is_relative_to(s.location)), None
        )
        if inside is not None:
            sources.append(FileSource(name, None, f"included in {inside.name} ({folder})"))
        else:
            sources.append(FileSource(name, folder))
    return sources


@dataclass
class BackupMade:
    folder: Path
    manifest: dict[str, Any]
    notes: list[str] = field(default_factory=list)


def _version() -> str:
    try:
        return metadata.version("safeground")
    except metadata.PackageNotFoundError:
        return "unknown"


def backup_make(*, folder: Path) -> BackupMade:
    """Back the system up into `folder` (new or empty)."""
    if folder.exists() and not folder.is_dir():
        raise BackupError("dir", f"{folder} is a file: give a folder for the backup")
    if folder.is_dir() and any(folder.iterdir()):
        raise BackupError("dir", f"{folder} is not empty: give a new or empty folder")
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as error:
        raise BackupError("dir", f"cannot create {folder}: {error.strerror}") from None
    folder.chmod(0o700)  # criminal-offence data: only the operator's account reads it
    created = datetime.now(UTC)
    database = database_dump(folder, backup_counts)
    counts = database.pop("counts")
    entries = [file_entry(folder, folder / database["file"])]
    sources = file_sources()
    for source in sources:
        if source.location is None or not source.location.is_dir():
            continue
        for path in sorted(source.location.rglob("*")):
            if not path.is_file() or (path.name.startswith(".") and ".restoring-" in path.name):
                continue
            copy = folder / FILES / source.name / path.relative_to(source.location)
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, copy)
            entries.append(file_entry(folder, copy))
    manifest = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "safeground_version": _version(),
        "created_at": created.isoformat(timespec="seconds"),
        "database": database,
        "sources": {
            s.name: {
                "included": s.location is not None,
                "location": str(s.location or ""),
                "note": s.note,
            }
            for s in sources
        },
        "counts": counts,
        "files": entries,
    }
    manifest_write(folder, manifest)
    return BackupMade(folder, manifest, [f"{s.name}: {s.note}" for s in sources if s.note])


@dataclass
class Restored:
    database: str
    files: int
    skipped_same: int
    check: RestoredCheck
    notes: list[str] = field(default_factory=list)


def _targets(manifest: dict[str, Any]) -> dict[str, Path]:
    """Where each source of the backup goes here; refused when this system keeps it elsewhere
    than in a folder."""
    here = {s.name: s for s in file_sources()}
    targets: dict[str, Path] = {}
    for name in {Path(str(f["path"])).parts[1] for f in manifest["files"] if "/" in f["path"]}:
        source = here.get(name)
        if source is None or source.location is None:
            why = source.note if source else "unknown"
            raise BackupError(
                "dir", f"the backup has {name} files, but this system cannot take them: {why}"
            )
        targets[name] = source.location
    return targets


def backup_restore(*, folder: Path) -> Restored:
    """Restore a backup into this (empty) system, then verify it."""
    manifest = manifest_read(folder)
    found = folder_check(folder, manifest)
    if not found.ok:
        named = (
            [f"DOES NOT MATCH: {n} (its size or SHA-256 differs from the manifest)"
             for n in found.mismatched]
            + [f"MISSING: {n} (listed in the manifest)" for n in found.missing]
            + [f"NOT LISTED: {n} (in the folder, not in the manifest)" for n in found.unlisted]
        )  # fmt: skip
        raise BackupError(
            "dir",
            f"{folder} does not match its manifest; nothing was restored:\n  " + "\n  ".join(named),
        )
    database_check_restorable(manifest)
    targets = _targets(manifest)
    moves: list[tuple[Path, Path]] = []
    same = 0
    for one in manifest["files"]:
        parts = Path(str(one["path"])).parts
        if parts[0] != FILES:
            continue
        final = targets[parts[1]].joinpath(*parts[2:])
        if final.exists():
            if final.is_file() and file_sha256(final) == one["sha256"]:
                same += 1
                continue
            raise BackupError(
                "dir",
                f"{final} already exists with other content: restore into an empty system"
                " (nothing was restored)",
            )
        moves.append((folder / one["path"], final))
    staging = {
        name: to.parent / f".{to.name}.restoring-{os.getpid()}" for name, to in targets.items()
    }
    restored = False
    try:
        staged: list[tuple[Path, Path]] = []
        for source, final in moves:
            name = next(n for n, to in targets.items() if final.is_relative_to(to))
            step = staging[name] / final.relative_to(targets[name])
            step.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, step)
            staged.append((step, final))
        database_restore(folder, manifest)
        restored = True
        for step, final in staged:
            final.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(step, final)
    except OSError as error:
        state = (
            "the database WAS restored but some files were not: copy the rest from the backup"
            if restored
            else "nothing was restored"
        )
        raise BackupError(
            "dir", f"cannot write {error.filename}: {error.strerror} ({state})"
        ) from None
    finally:
        for path in staging.values():
            shutil.rmtree(path, ignore_errors=True)
    checkpoints = next((s.location for s in file_sources() if s.name == "checkpoints"), None)
    check = restored_check(checkpoint_folder=checkpoints, counts=manifest.get("counts", {}))
    notes = [
        f"{name}: {source['note']}"
        for name, source in manifest.get("sources", {}).items()
        if source.get("note")
    ]
    return Restored(database_name(), len(moves), same, check, notes)
