"""A supporter's photo, checked as the log's photos are (type, size, SHA-256) and kept without
its metadata: a phone's photo carries where it was taken (GPS) and the phone's make in its EXIF,
which the control room does not need and the supporter did not mean to send."""

import hashlib
import io
from dataclasses import dataclass
from typing import Any

from django.core.files.base import ContentFile
from django.utils.translation import gettext as _
from PIL import Image, ImageOps, UnidentifiedImageError

from safeground.errors import SafegroundError
from safeground.incidents.photos import photo_refusal

# What Pillow calls each type the log accepts, and the type it is then saved as.
FORMATS = {"JPEG": "image/jpeg", "PNG": "image/png", "WEBP": "image/webp"}
MAX_PIXELS = 40_000_000  # a phone's camera is under this; a decompression bomb is not


class PhotoRefused(SafegroundError):
    code = "photo_refused"


@dataclass(frozen=True)
class CleanPhoto:
    file: ContentFile
    sha256: str  # of the file as kept (metadata removed)
    content_type: str


def photo_clean(upload: Any) -> CleanPhoto:
    """The upload re-encoded without metadata (EXIF, GPS, comments), or PhotoRefused naming why."""
    refused = photo_refusal(upload)  # the log's rule: its type and size
    if refused:
        raise PhotoRefused("photo", refused)
    try:
        with Image.open(upload) as image:
            kind = image.format or ""
            if kind not in FORMATS or image.width * image.height > MAX_PIXELS:
                raise PhotoRefused("photo", _("send a JPEG, PNG or WebP image"))
            # Turned upright as the phone meant it, then copied pixel by pixel: nothing of the
            # original's metadata comes along.
            upright = ImageOps.exif_transpose(image)
            mode = "RGB" if kind == "JPEG" else upright.mode
            clean = Image.new(mode, upright.size)
            clean.paste(upright.convert(mode))
    except (UnidentifiedImageError, OSError, Image.DecompressionBombError) as error:
        raise PhotoRefused("photo", _("the file is not an image that can be read")) from error
    out = io.BytesIO()
    clean.save(out, format=kind)
    data = out.getvalue()
    extension = {"JPEG": "jpg", "PNG": "png", "WEBP": "webp"}[kind]
    sha256 = hashlib.sha256(data).hexdigest()
    return CleanPhoto(ContentFile(data, name=f"{sha256[:16]}.{extension}"), sha256, FORMATS[kind])
