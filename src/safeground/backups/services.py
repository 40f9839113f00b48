"""Backup and restore: the database, the files beside it, and a manifest of hashes.

`backup_make` writes the database copy, then the files, then the manifest (last: a folder
without one is incomplete). `backup_restore` checks every file against the manifest and the
target for emptiness before it changes anything, stages the files beside their folders, restores
the database whole (database.py), moves the files in, then verifies the restored system
(selectors.restored_check).
"""

import json
import os
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path, PurePosixPath
from typing import Any

from django.core.files.storage import FileSystemStorage, Storage, storages
from pyrage import x25519

from safeground import clock
from safeground.casework.models import evidence_storage
from safeground.incidents.checkpoints import checkpoint_storage

from .database import database_check_restorable, database_dump, database_name, database_restore
from .encryption import (
    SCHEME,
    SUFFIX,
    Sealed,
    bytes_decrypt,
    bytes_encrypt,
    file_decrypt,
    file_encrypt,
    identities_read,
    public_keys,
    recipients_parse,
)
from .manifest import (
    CONTENTS,
    ENCRYPTED_FORMAT_VERSION,
    FILES,
    FORMAT,
    FORMAT_VERSION,
    MANIFEST,
    BackupError,
    file_entry,
    file_sha256,
    folder_check,
    manifest_parse,
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


def _folder_new(folder: Path) -> None:
    if folder.exists() and not folder.is_dir():
        raise BackupError("dir", f"{folder} is a file: give a folder for the backup")
    if folder.is_dir() and any(folder.iterdir()):
        raise BackupError("dir", f"{folder} is not empty: give a new or empty folder")
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as error:
        raise BackupError("dir", f"cannot create {folder}: {error.strerror}") from None
    folder.chmod(0o700)  # criminal-offence data: only the operator's account reads it


def _source_files(sources: list[FileSource]) -> Iterator[tuple[Path, str]]:
    """Each file to back up, with its name in the backup (files/<source>/...)."""
    for source in sources:
        if source.location is None or not source.location.is_dir():
            continue
        for path in sorted(source.location.rglob("*")):
            if not path.is_file() or (path.name.startswith(".") and ".restoring-" in path.name):
                continue
            name = PurePosixPath(FILES, source.name, *path.relative_to(source.location).parts)
            yield path, str(name)


def _manifest(
    created: datetime, database: dict[str, Any], sources: list[FileSource]
) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "safeground_version": _version(),
        "created_at": clock.utc_iso(created, "seconds"),
        "database": database,
        "sources": {
            s.name: {
                "included": s.location is not None,
                "location": str(s.location or ""),
                "note": s.note,
            }
            for s in sources
        },
    }


def backup_make(*, folder: Path, recipients: Sequence[str] = ()) -> BackupMade:
    """Back the system up into `folder` (new or empty); encrypted to `recipients` (age public
    keys) when any are given."""
    keys = recipients_parse(recipients)  # a bad key is refused before anything is written
    _folder_new(folder)
    created = datetime.now(UTC)
    sources = file_sources()
    if keys:
        manifest = _backup_encrypted(folder, keys, created, sources)
    else:
        database = database_dump(folder, backup_counts)
        counts = database.pop("counts")
        entries = [file_entry(folder, folder / database["file"])]
        for path, name in _source_files(sources):
            copy = folder / name
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, copy)
            entries.append(file_entry(folder, copy))
        manifest = {**_manifest(created, database, sources), "counts": counts, "files": entries}
    manifest_write(folder, manifest)
    return BackupMade(folder, manifest, [f"{s.name}: {s.note}" for s in sources if s.note])


def _backup_encrypted(
    folder: Path, keys: list[x25519.Recipient], created: datetime, sources: list[FileSource]
) -> dict[str, Any]:
    """Every file encrypted into `folder` under a name that says nothing of it; the plain
    manifest (real names) encrypted as contents.json.age; answers the readable manifest."""
    stored: list[dict[str, Any]] = []  # the readable manifest's files: as stored, and plaintext
    inner: list[dict[str, Any]] = []  # the plain manifest's files, each with where it is stored

    def as_stored(sealed: Sealed, stored_as: str) -> None:
        stored.append(
            {"path": stored_as, "size": sealed.size, "sha256": sealed.sha256,
             "plaintext_size": sealed.plaintext_size,
             "plaintext_sha256": sealed.plaintext_sha256}
        )  # fmt: skip

    def seal(sealed: Sealed, name: str, stored_as: str) -> None:
        as_stored(sealed, stored_as)
        inner.append(
            {"path": name, "size": sealed.plaintext_size, "sha256": sealed.plaintext_sha256,
             "stored_as": stored_as}
        )  # fmt: skip

    # The database copy is made in a private temporary folder: only its encryption enters DIR.
    with tempfile.TemporaryDirectory(prefix="safeground-backup-") as scratch:
        database = database_dump(Path(scratch), backup_counts)
        name = database["file"]
        seal(
            file_encrypt(Path(scratch) / name, folder / (name + SUFFIX), keys), name, name + SUFFIX
        )
    counts = database.pop("counts")
    for number, (path, name) in enumerate(_source_files(sources), start=1):
        # files/<source>/ kept (restore puts each source in its folder); the rest is a number.
        stored_as = str(PurePosixPath(*PurePosixPath(name).parts[:2], f"{number:06d}{SUFFIX}"))
        (folder / stored_as).parent.mkdir(parents=True, exist_ok=True)
        seal(file_encrypt(path, folder / stored_as, keys), name, stored_as)
    plain = {**_manifest(created, database, sources), "counts": counts, "files": inner}
    contents = bytes_encrypt(
        (json.dumps(plain, indent=2, sort_keys=True) + "\n").encode(), folder / CONTENTS, keys
    )
    as_stored(contents, CONTENTS)
    return {
        **_manifest(created, {**database, "file": database["file"] + SUFFIX}, sources),
        "format_version": ENCRYPTED_FORMAT_VERSION,
        "encryption": {
            "scheme": SCHEME,
            "recipients": [str(key) for key in keys],
            "contents": CONTENTS,
        },
        "counts": counts,
        "files": stored,
    }


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


def _refuse_unless_whole(folder: Path, manifest: dict[str, Any]) -> None:
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


def backup_restore(*, folder: Path, identity: Path | None = None) -> Restored:
    """Restore a backup into this (empty) system, then verify it. An encrypted backup needs
    `identity`, an age identity file holding the private key of one of its recipients."""
    manifest = manifest_read(folder)
    if manifest["format_version"] != ENCRYPTED_FORMAT_VERSION:
        if identity is not None:
            raise BackupError(
                "identity", f"{folder} is not encrypted: restore it without --identity"
            )
        _refuse_unless_whole(folder, manifest)
        return _restore(folder, manifest)
    recipients = [str(key) for key in manifest["encryption"]["recipients"]]
    if identity is None:
        raise BackupError(
            "identity",
            f"{folder} is encrypted (age, to {', '.join(recipients)}): give the private key of"
            " one of them with --identity FILE (nothing was restored)",
        )
    identities = identities_read(identity)
    if not set(public_keys(identities)) & set(recipients):
        raise BackupError(
            "identity",
            f"the key in {identity} ({', '.join(public_keys(identities))}) is not one {folder}"
            f" was encrypted to ({', '.join(recipients)}): nothing was restored",
        )
    _refuse_unless_whole(folder, manifest)
    # Decrypted into a private (0700) temporary folder, removed after, each file checked
    # against its plaintext SHA-256; then restored from there as a plain backup is.
    with tempfile.TemporaryDirectory(prefix="safeground-restore-") as scratch:
        plain = Path(scratch)
        try:
            _decrypt_into(plain, folder, manifest, identities)
        except BackupError as error:
            raise BackupError(error.field, f"{error.message}; nothing was restored") from None
        return _restore(plain, manifest_read(plain))


def _decrypt_into(
    plain: Path, folder: Path, manifest: dict[str, Any], identities: list[x25519.Identity]
) -> None:
    """The plain backup in `plain`: its manifest from contents.json.age, each file decrypted to
    its real name and checked against the SHA-256 of the plaintext that the manifest records."""
    contents = str(manifest["encryption"].get("contents", CONTENTS))
    stored = {str(one["path"]): one for one in manifest["files"]}
    if contents not in stored:
        raise BackupError("dir", f"{folder}: the manifest does not list {contents}")
    text = bytes_decrypt(folder / contents, identities)
    where = f"{folder / contents}"
    try:
        inner = manifest_parse(text.decode("utf-8"), where)
    except UnicodeDecodeError:
        raise BackupError("dir", f"{where}: not a Safeground backup manifest") from None
    if inner["format_version"] != FORMAT_VERSION:
        raise BackupError("dir", f"{where}: not a plain (format {FORMAT_VERSION}) manifest")
    (plain / MANIFEST).write_bytes(text)
    for one in inner["files"]:
        stored_as = str(one.get("stored_as", ""))
        outer = stored.get(stored_as)
        if outer is None:
            raise BackupError(
                "dir", f"{where}: {one['path']} is stored as {stored_as!r}, which is not listed"
            )
        target = plain / str(one["path"])
        target.parent.mkdir(parents=True, exist_ok=True)
        sha256, size = file_decrypt(folder / stored_as, target, identities)
        if (sha256, size) != (outer.get("plaintext_sha256"), outer.get("plaintext_size")) or (
            sha256 != one["sha256"]
        ):
            raise BackupError(
                "dir",
                f"DOES NOT MATCH: {one['path']} (stored as {stored_as}) decrypts to other content"
                " than the manifest records",
            )


def _restore(folder: Path, manifest: dict[str, Any]) -> Restored:
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
