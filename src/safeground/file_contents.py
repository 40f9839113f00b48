"""Whether a file's first bytes agree with the type it claims: one rule for every upload that is
kept (the log's photos, the stewards' checks, supporters' photos, the evidence locker), so a
renamed file is refused wherever it is sent."""

from typing import Any

HEAD_BYTES = 16  # enough for every signature below


def head_of(upload: Any) -> bytes:
    """The upload's first bytes; the file is left at its start to be read again."""
    upload.seek(0)
    head = upload.read(HEAD_BYTES)
    upload.seek(0)
    return bytes(head)


def looks_like(content_type: str, head: bytes) -> bool:
    """The file's first bytes agree with the type it claims."""
    if content_type == "image/jpeg":
        return head.startswith(b"\xff\xd8\xff")
    if content_type == "image/png":
        return head.startswith(b"\x89PNG\r\n\x1a\n")
    if content_type == "image/webp":
        return head[:4] == b"RIFF" and head[8:12] == b"WEBP"
    if content_type == "application/pdf":
        return head.startswith(b"%PDF-")
    if content_type in {"video/mp4", "video/quicktime"}:
        return head[4:8] in {b"ftyp", b"moov", b"mdat", b"wide", b"free"}
    if content_type == "video/webm":
        return head.startswith(b"\x1a\x45\xdf\xa3")
    if content_type == "text/plain":
        return b"\x00" not in head
    return False
