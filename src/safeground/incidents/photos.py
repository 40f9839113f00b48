"""Photos of the log's entries, each kept with its SHA-256 and chained as a record in the log.
(Their retention is with the log's other retention, not here.)"""

import hashlib
from typing import Any

from django.utils.translation import gettext as _

from safeground.accounts.models import User
from safeground.file_contents import head_of, looks_like
from safeground.live.catalogue import LOG_PHOTO
from safeground.live.events import publish
from safeground.stored_files import file_then_record

from .models import LogEntry, Photo
from .selectors import RECORD_KINDS, logged_entry_audience, photo_json
from .services import LogEntryError, log_record_append

PHOTO_TYPES = {"image/jpeg", "image/png", "image/webp"}
PHOTO_MAX_BYTES = 10 * 1024 * 1024


def photo_refusal(upload: Any) -> str | None:
    """Why an uploaded photo is refused (its type, its size, a file that is not the image it says
    it is), or None: the one rule for the log's photos, the deployment checks' and the supporters'.
    Only its first bytes are read: the file is kept byte for byte, as evidence must be."""
    if upload.content_type not in PHOTO_TYPES:
        return _("a JPEG, PNG or WebP image")
    if upload.size > PHOTO_MAX_BYTES:
        return _("at most %(size)s MB") % {"size": PHOTO_MAX_BYTES // (1024 * 1024)}
    if not looks_like(upload.content_type, head_of(upload)):
        return _("a JPEG, PNG or WebP image: this file is not the image it says it is")
    return None


def photo_sha256(upload: Any) -> str:
    """The upload's SHA-256, read in chunks; the file is left at its start to be stored."""
    digest = hashlib.sha256()
    for chunk in upload.chunks():
        digest.update(chunk)
    upload.seek(0)
    return digest.hexdigest()


def log_entry_photo_add(*, entry: LogEntry, author: User, upload: Any) -> Photo:
    """Keep a photo with its SHA-256, so it can later stand as evidence unchanged. The file is
    written first, then the photo and its record in the chain in one transaction; the file is
    removed if they fail (a full disk, a database refusing writes). Called outside any
    transaction."""
    if entry.kind in RECORD_KINDS:
        raise LogEntryError(
            "entry", _("#%(seq)s is a record, not an entry to photograph") % {"seq": entry.seq}
        )
    refused = photo_refusal(upload)
    if refused:
        raise LogEntryError("photo", refused)
    sha256 = photo_sha256(upload)

    def record(stored: str) -> Photo:
        photo = Photo.objects.create(
            entry=entry,
            image=stored,
            sha256=sha256,
            content_type=upload.content_type,
            size=upload.size,
            uploaded_by=author,
        )
        # The photo's SHA-256 joins the chain: a file swapped later no longer matches the log.
        chained = log_record_append(
            fixture=entry.fixture,
            author=author,
            kind=LogEntry.Kind.PHOTO,
            text=photo.sha256,
            note=f"photo {photo.pk} of #{entry.seq} ({photo.content_type}, {photo.size} bytes)",
            links=[entry.seq],
            home_only=entry.home_only,
        )
        publish(
            fixture_id=entry.fixture_id,
            type=LOG_PHOTO,
            data=photo_json(photo, entry),
            audience=logged_entry_audience(entry),  # whoever may see the entry
            chain_seq=chained.seq,
        )
        return photo

    field = Photo.image.field  # its folder by month, in the default storage
    return file_then_record(
        storage=field.storage,
        name=field.generate_filename(Photo(), upload.name),
        content=upload,
        record=record,
    )
