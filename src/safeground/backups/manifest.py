"""A backup folder and its manifest: what is in it, and whether every file is as it was written.

    DIR/manifest.json            written last: a folder without it is an incomplete backup
    DIR/database.sqlite3         or DIR/database.pgdump (pg_dump --format=custom)
    DIR/files/media/...          MEDIA_ROOT: log photos, check photos, register photos, evidence
    DIR/files/evidence/...       the evidence storage, when it is a folder of its own
    DIR/files/checkpoints/...    the signed checkpoint files (SAFEGROUND_CHECKPOINT_STORAGE)

The manifest names every file with its size and SHA-256, the database's vendor, what was left
out and why (evidence on S3), and counts a person can compare (log entries per match, scans,
evidence).

An encrypted backup (format 2, encryption.py) holds every file encrypted to age public keys:

    DIR/manifest.json            readable: the recipients, the counts, and each stored file's size
                                 and SHA-256 as stored (checked without the key) and as plaintext
    DIR/contents.json.age        the plain (format 1) manifest, with each file's real name and the
                                 name it is stored as: file names are the uploaders' own and may
                                 name a person, so they are encrypted too
    DIR/database.sqlite3.age     or DIR/database.pgdump.age
    DIR/files/<source>/000001.age ...
"""

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from safeground.errors import SafegroundError

FORMAT = "safeground-backup"
FORMAT_VERSION = 1
# An encrypted backup (encryption.py): a Safeground that reads only format 1 refuses it by number.
ENCRYPTED_FORMAT_VERSION = 2
MANIFEST = "manifest.json"
CONTENTS = "contents.json.age"  # an encrypted backup's plain manifest
FILES = "files"


class BackupError(SafegroundError):
    """A backup or restore refused: nothing was changed (the message says what to do)."""

    code = "backup_refused"


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def file_entry(folder: Path, path: Path) -> dict[str, Any]:
    return {
        "path": path.relative_to(folder).as_posix(),
        "size": path.stat().st_size,
        "sha256": file_sha256(path),
    }


def manifest_write(folder: Path, manifest: dict[str, Any]) -> Path:
    """Write the manifest through a temporary name, so a manifest present is a whole one."""
    path = folder / MANIFEST
    partial = folder / f".{MANIFEST}.partial"
    partial.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(partial, path)
    return path


def manifest_read(folder: Path) -> dict[str, Any]:
    if not folder.exists():
        raise BackupError("dir", f"{folder}: no such folder")
    if not folder.is_dir():
        raise BackupError("dir", f"{folder}: not a folder (give the backup's folder)")
    path = folder / MANIFEST
    if not path.is_file():
        raise BackupError(
            "dir",
            f"{folder} has no {MANIFEST}: not a Safeground backup, or one that did not finish"
            " (the manifest is written last)",
        )
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise BackupError("dir", f"{path}: not JSON ({error})") from None
    manifest = manifest_parse(text, str(path))
    if manifest["format_version"] == ENCRYPTED_FORMAT_VERSION:
        encryption = manifest.get("encryption")
        keys = encryption.get("recipients") if isinstance(encryption, dict) else None
        if not isinstance(keys, list) or not keys or not all(isinstance(k, str) for k in keys):
            raise BackupError("dir", f"{path}: an encrypted backup's manifest names no recipients")
    return manifest


def manifest_parse(text: str, path: str) -> dict[str, Any]:
    """A manifest's text, checked: its format, and every file a path inside the backup."""
    try:
        manifest = json.loads(text)
    except json.JSONDecodeError as error:
        raise BackupError("dir", f"{path}: not JSON ({error})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise BackupError("dir", f"{path}: not a Safeground backup manifest")
    if manifest.get("format_version") not in (FORMAT_VERSION, ENCRYPTED_FORMAT_VERSION):
        raise BackupError(
            "dir",
            f"{path}: backup format {manifest.get('format_version')!r}; this Safeground reads"
            f" formats {FORMAT_VERSION} and {ENCRYPTED_FORMAT_VERSION} (encrypted)",
        )
    files = manifest.get("files")
    if not isinstance(files, list) or not all(
        isinstance(f, dict) and {"path", "size", "sha256"} <= set(f) for f in files
    ):
        raise BackupError("dir", f"{path}: 'files' must list path, size and sha256 of each file")
    for one in files:
        name = Path(str(one["path"]))
        if name.is_absolute() or ".." in name.parts:
            raise BackupError("dir", f"{path}: {one['path']} is not a path inside the backup")
    return manifest


@dataclass
class FolderCheck:
    """Every file of a backup folder against its manifest."""

    checked: int = 0
    mismatched: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    unlisted: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (self.mismatched or self.missing or self.unlisted)


def folder_check(folder: Path, manifest: dict[str, Any]) -> FolderCheck:
    """Each listed file's size and SHA-256, and no file that the manifest does not list."""
    check = FolderCheck()
    listed = set()
    for one in manifest["files"]:
        name = str(one["path"])
        listed.add(name)
        path = folder / name
        if not path.is_file():
            check.missing.append(name)
        elif path.stat().st_size != one["size"] or file_sha256(path) != one["sha256"]:
            check.mismatched.append(name)
        else:
            check.checked += 1
    for path in sorted(folder.rglob("*")):
        name = path.relative_to(folder).as_posix()
        if path.is_file() and name != MANIFEST and name not in listed:
            check.unlisted.append(name)
    return check
