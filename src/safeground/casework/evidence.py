"""Evidence: a file kept with the SHA-256 of its bytes as they arrived, or CCTV footage as a
reference, each upload in its custody record and the case's history (ADR 0007)."""

import hashlib
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.text import get_valid_filename
from django.utils.translation import gettext as _

from safeground.accounts.models import User
from safeground.errors import SafegroundError, one_of
from safeground.file_contents import head_of, looks_like
from safeground.incidents.models import LogEntry
from safeground.matches.models import Fixture
from safeground.stored_files import file_then_record

from .models import Case, CustodyRecord, Evidence, Subject, evidence_storage
from .services import case_event, custody_record_write, text_field


class EvidenceRefused(SafegroundError):
    """A file the evidence locker refuses (type, size, empty); nothing was stored."""

    code = "evidence_refused"


IMAGES = {"image/jpeg", "image/png", "image/webp"}
TYPES: dict[str, set[str]] = {
    Evidence.Kind.PHOTO: IMAGES,
    Evidence.Kind.SCREENSHOT: IMAGES,
    Evidence.Kind.VIDEO: {"video/mp4", "video/quicktime", "video/webm"},
    Evidence.Kind.DOCUMENT: {"application/pdf", "text/plain", *IMAGES},
}
IMAGE_MAX_MB = 25


def max_bytes(kind: str) -> int:
    """Videos up to SAFEGROUND_EVIDENCE_MAX_MB; images and documents up to 25 MB (or less)."""
    limit = int(settings.SAFEGROUND_EVIDENCE_MAX_MB)
    return (limit if kind == Evidence.Kind.VIDEO else min(limit, IMAGE_MAX_MB)) * 1024 * 1024


def _megabytes(size: int) -> str:
    return f"{size / (1024 * 1024):.0f} MB ({size:,} bytes)"


def _footage_fields(
    camera: str, footage_from: datetime | None, footage_to: datetime | None
) -> dict[str, Any]:
    """CCTV footage: the camera and the footage's start and end."""
    camera = text_field("camera", camera, max_length=100)
    if footage_from is None or footage_to is None:
        raise EvidenceRefused("footage_from", _("give the start and end of the footage"))
    if footage_to <= footage_from:
        raise EvidenceRefused("footage_to", _("the end is not after the start"))
    return {"camera": camera, "footage_from": footage_from, "footage_to": footage_to}


def _file_fields(kind: str, upload: Any) -> dict[str, Any]:
    """A file of an allowed type and size whose first bytes agree with its type, named by its
    SHA-256 so two uploads of one name never overwrite each other."""
    if upload is None:
        raise EvidenceRefused("file", _("choose a file"))
    allowed = TYPES[kind]
    content_type = (upload.content_type or "").split(";")[0].strip().lower()
    if content_type not in allowed:
        said = _("a %(kind)s must be one of %(types)s, not %(given)s")
        raise EvidenceRefused(
            "file",
            said
            % {
                "kind": str(Evidence.Kind(kind).label).lower(),
                "types": ", ".join(sorted(allowed)),
                "given": content_type or _("an unknown type"),
            },
        )
    if not upload.size:
        raise EvidenceRefused("file", _("the file is empty"))
    limit = max_bytes(kind)
    if upload.size > limit:
        said = _("the file is %(size)s bytes; a %(kind)s may be at most %(limit)s")
        raise EvidenceRefused(
            "file",
            said
            % {
                "size": f"{upload.size:,}",
                "kind": str(Evidence.Kind(kind).label).lower(),
                "limit": _megabytes(limit),
            },
        )
    digest = hashlib.sha256()
    for chunk in upload.chunks():
        digest.update(chunk)
    upload.seek(0)
    if not looks_like(content_type, head_of(upload)):
        raise EvidenceRefused(
            "file", _("the file's contents are not %(type)s") % {"type": content_type}
        )
    sha256 = digest.hexdigest()
    original = get_valid_filename(upload.name or "file")[-150:] or "file"
    upload.name = f"{sha256[:16]}-{original}"
    return {
        "file": upload, "original_name": original, "content_type": content_type,
        "size": upload.size, "sha256": sha256,
    }  # fmt: skip


def evidence_add(
    *,
    by: User,
    fixture: Fixture,
    kind: str,
    case: Case | None = None,
    entry: LogEntry | None = None,
    subject: Subject | None = None,
    upload: Any = None,
    description: str = "",
    camera: str = "",
    footage_from: datetime | None = None,
    footage_to: datetime | None = None,
) -> Evidence:
    """Add a piece of evidence to a case and/or a log entry of the match. A file is kept with the
    SHA-256 of its bytes as they arrived; CCTV footage is a reference (camera, start, end).
    Called outside any transaction: it makes its own, after the file is written."""
    if kind not in Evidence.Kind.values:
        raise EvidenceRefused("kind", one_of(Evidence.Kind.values))
    if case is None and entry is None:
        raise EvidenceRefused("case", _("attach the evidence to a case or a log entry"))
    if case is not None and case.fixture_id != fixture.pk:
        raise EvidenceRefused("case", _("a case of this match"))
    if entry is not None and entry.fixture_id != fixture.pk:
        raise EvidenceRefused("entry", _("an entry of this match's log"))
    if subject is not None and (case is None or subject.case_id != case.pk):
        raise EvidenceRefused("subject", _("a subject of the same case"))
    description = text_field("description", description, required=False)
    if kind == Evidence.Kind.CCTV:
        if upload is not None:
            raise EvidenceRefused(
                "file", _("CCTV footage is a reference: no file (upload a still as a photo)")
            )
        fields = _footage_fields(camera, footage_from, footage_to)
    else:
        fields = _file_fields(kind, upload)

    def record(stored: str | None) -> Evidence:
        kept = fields if stored is None else {**fields, "file": stored}
        evidence = Evidence.objects.create(
            fixture=fixture, case=case, entry=entry, subject=subject, kind=kind,
            description=description, uploaded_by=by, uploaded_at=timezone.now(), **kept,
        )  # fmt: skip
        custody_record_write(
            user=by, action=CustodyRecord.Action.UPLOAD, evidence=evidence, case=case,
            detail=evidence.original_name or evidence.camera,
        )  # fmt: skip
        if case is not None:
            what = evidence.original_name or f"camera {evidence.camera}"
            sha = f", SHA-256 {evidence.sha256}" if evidence.sha256 else ""
            case_event(case, by=by, action="evidence added",
                   detail=f"#{evidence.pk} {evidence.get_kind_display()}: {what}{sha}")  # fmt: skip
        return evidence

    if kind == Evidence.Kind.CCTV:
        with transaction.atomic():
            return record(None)
    # The file first, then its records in one transaction; the file is removed if they fail
    # (a full disk, a database refusing writes): never a record without its file or the reverse.
    upload = fields["file"]
    return file_then_record(
        storage=evidence_storage(),
        name=Evidence.file.field.generate_filename(Evidence(), upload.name),
        content=upload,
        record=record,
    )
