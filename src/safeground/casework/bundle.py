"""A case bundle: the case as one ZIP a court, the police or the FA can check on their own.

    summary.pdf        the case printed (safeground.printing)
    log.json           the case's log entries, each with its prev_hash and hash, and the result
                       of checking the match's chain against its signed checkpoints
                       (incidents.verify.log_verify)
    checkpoints.json   the match's signed checkpoints (verify-log --checkpoints reads them)
    evidence/...       every evidence file of the case and of its log entries, as uploaded (CCTV
                       references are listed in manifest.json, they have no file; nor has a
                       file erased by retention, listed with its `erased_at` and SHA-256)
    photos/...         the stewards' photos of its log entries, as taken
    decisions.json     the commanders' decisions linked to its log entries (decisions app), each
                       with its chained entry's hash
    manifest.json      the case, and the SHA-256 of every other file in the ZIP; for evidence,
                       the SHA-256 recorded at upload too

`safeground verify-bundle FILE` recomputes every hash and names each file that does not match
the manifest, is missing, or is not listed.
"""

import hashlib
import json
import shutil
import tempfile
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from django.core.serializers.json import DjangoJSONEncoder
from django.utils import timezone
from django.utils.text import get_valid_filename

from safeground import clock
from safeground.decisions.selectors import decisions_citing
from safeground.errors import SafegroundError
from safeground.incidents.chain import canonical
from safeground.incidents.checkpoints import checkpoints_document
from safeground.incidents.models import Photo
from safeground.incidents.verify import log_verify
from safeground.printing import render_pdf

from .models import Case, Evidence

MANIFEST = "manifest.json"
FORMAT = "safeground-case-bundle/1"


class BundleError(SafegroundError):
    """A file that is not a case bundle at all (not a ZIP, no manifest)."""

    code = "bundle_unreadable"


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _time(value: Any) -> str | None:
    return clock.utc_iso(value) if value else None


def evidence_path(evidence: Evidence) -> str:
    return f"evidence/{evidence.pk:05d}-{get_valid_filename(evidence.original_name) or 'file'}"


PHOTO_SUFFIX = {"image/jpeg": "jpg", "image/png": "png", "image/webp": "webp"}


def photo_path(photo: Photo) -> str:
    suffix = PHOTO_SUFFIX.get(photo.content_type, "bin")
    return f"photos/{photo.pk:05d}-entry-{photo.entry.seq}.{suffix}"


def _copy_in(zf: zipfile.ZipFile, path: str, stored: Any) -> str:
    """Copy a stored file into the ZIP in chunks; its SHA-256 as it went in."""
    with stored.open("rb") as source, zf.open(path, "w") as target:
        hashing = _Hashing(source)
        shutil.copyfileobj(hashing, target, CHUNK)
    return hashing.digest.hexdigest()


def log_extract(case: Case, entries: list[Any]) -> dict[str, Any]:
    """The case's entries as stored, each with its hashes, and the chain check of the match."""
    check = log_verify(case.fixture_id)
    broken = check.chain_break
    return {
        "fixture": case.fixture_id,
        "chain_check": {
            "entries_checked": check.entries,
            "intact": check.ok,
            "first_break": None if broken is None else {"seq": broken.seq, "reason": broken.reason},
            # Against the signed checkpoints (ADR 0008): how many entries a signature covers,
            # and anything missing or altered since.
            "checkpoints": check.checkpoints,
            "anchored": check.anchored,
            "problems": [{"code": p.code, "message": p.message} for p in check.problems],
        },
        "entries": [
            {
                "seq": entry.seq,
                "prev_hash": entry.prev_hash,
                "hash": entry.hash,
                "canonical": canonical(entry).decode(),
            }
            for entry in entries
        ],
    }


CHUNK = 1024 * 1024


class _Hashing:
    """A file object that hashes what is read through it (one pass: hash and copy together)."""

    def __init__(self, source: IO[bytes]) -> None:
        self.source, self.digest = source, hashlib.sha256()

    def read(self, size: int = -1) -> bytes:
        data = self.source.read(size)
        self.digest.update(data)
        return data


def bundle_build(case: Case, detail: dict[str, Any], *, by: Any) -> IO[bytes]:
    """The ZIP in a temporary file (evidence may be large videos: nothing is held in memory
    whole), positioned at its start. The caller records the export
    (services.case_bundle_export)."""
    log = log_extract(case, detail["entries"])
    small: dict[str, bytes] = {
        "log.json": json.dumps(log, indent=2, ensure_ascii=False).encode(),
        # The match's signed checkpoints, so the log can be checked away from the club's
        # database: `safeground verify-log --checkpoints checkpoints.json`.
        "checkpoints.json": json.dumps(checkpoints_document(case.fixture), indent=2).encode(),
        "decisions.json": json.dumps(
            decisions_citing(by, case.fixture, {e.seq for e in detail["entries"]}),
            indent=2,
            ensure_ascii=False,
            cls=DjangoJSONEncoder,
        ).encode(),
        "summary.pdf": render_pdf(
            "casework/print/case.html",
            {"case": case, **detail, "log": log, "exported_by": by, "exported_at": timezone.now()},
        ),
    }
    hashes = {path: _sha256(data) for path, data in small.items()}
    out = tempfile.TemporaryFile()  # noqa: SIM115  (returned open: the response streams it)
    listed = []
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for path, data in small.items():
            zf.writestr(path, data)
        for evidence in detail["evidence"]:
            item: dict[str, Any] = {
                "id": evidence.pk,
                "kind": evidence.kind,
                "description": evidence.description,
                "uploaded_by": evidence.uploaded_by.get_username(),
                "uploaded_at": _time(evidence.uploaded_at),
            }
            if evidence.entry is not None:
                item["entry"] = evidence.entry.seq
            if evidence.erased_at is not None:  # retention took the file; its hash is kept
                item |= {"erased_at": _time(evidence.erased_at),
                         "sha256_at_upload": evidence.sha256}  # fmt: skip
            elif evidence.file:
                path = evidence_path(evidence)
                hashes[path] = _copy_in(zf, path, evidence.file)
                item |= {"file": path, "sha256_at_upload": evidence.sha256}
            else:
                item |= {
                    "camera": evidence.camera,
                    "footage_from": _time(evidence.footage_from),
                    "footage_to": _time(evidence.footage_to),
                }
            listed.append(item)
        for photo in detail["photos"]:
            item = {
                "photo": photo.pk, "entry": photo.entry.seq, "sha256_at_upload": photo.sha256,
                "uploaded_by": photo.uploaded_by.get_username(),
                "uploaded_at": _time(photo.uploaded_at),
            }  # fmt: skip
            if photo.erased_at is not None:  # retention took the file; its hash is kept
                item["erased_at"] = _time(photo.erased_at)
            else:
                path = photo_path(photo)
                hashes[path] = _copy_in(zf, path, photo.image)
                item["file"] = path
            listed.append(item)
        manifest = {
            "format": FORMAT,
            "case": {"id": case.pk, "title": case.title, "fixture": str(case.fixture)},
            "exported_at": _time(timezone.now()),
            "exported_by": by.get_username(),
            "files": dict(sorted(hashes.items())),
            "evidence": listed,
        }
        zf.writestr(MANIFEST, json.dumps(manifest, indent=2, ensure_ascii=False))
    out.seek(0)
    return out


# What reading a damaged member raises: a bad CRC or header, a broken deflate stream, a cut-off
# file; RuntimeError and NotImplementedError for a flag byte turned to "encrypted" or an unknown
# compression (found by the parsers' property tests: a damaged manifest raised BadZipFile).
DAMAGED = (zipfile.BadZipFile, OSError, zlib.error, EOFError, RuntimeError, NotImplementedError)


def _member_sha256(zf: zipfile.ZipFile, name: str) -> str:
    digest = hashlib.sha256()
    with zf.open(name) as member:
        while chunk := member.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


@dataclass
class BundleCheck:
    checked: int = 0
    mismatched: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    unlisted: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (self.mismatched or self.missing or self.unlisted)


def bundle_verify(path: Path | str) -> BundleCheck:
    """Recompute every file's SHA-256 against the manifest (and each evidence file's against the
    hash recorded at upload). Raises BundleError for a file that is not a bundle."""
    try:
        zf = zipfile.ZipFile(path)
    except FileNotFoundError:
        raise BundleError("file", f"{path}: no such file") from None
    except (zipfile.BadZipFile, OSError) as error:
        raise BundleError("file", f"{path}: not a ZIP file ({error})") from None
    with zf:
        names = set(zf.namelist())
        if MANIFEST not in names:
            raise BundleError("file", f"{path}: a ZIP, but not a case bundle (no {MANIFEST})")
        try:
            manifest = json.loads(zf.read(MANIFEST))
            listed: dict[str, str] = manifest["files"]
            at_upload = {
                item["file"]: item["sha256_at_upload"]
                for item in manifest.get("evidence", [])
                if item.get("file")
            }
        except (ValueError, KeyError, TypeError, AttributeError, *DAMAGED) as error:
            raise BundleError("file", f"{path}: its {MANIFEST} cannot be read ({error})") from None
        check = BundleCheck()
        for name, expected in sorted(listed.items()):
            if name not in names:
                check.missing.append(name)
                continue
            try:
                actual = _member_sha256(zf, name)
            except DAMAGED:
                check.mismatched.append(name)
                continue
            check.checked += 1
            if actual != expected or at_upload.get(name, actual) != actual:
                check.mismatched.append(name)
        check.unlisted = sorted(names - set(listed) - {MANIFEST})
    return check
