"""One error type for everything Safeground refuses.

A service raises a `SafegroundError` subclass naming the field at fault and a message a person can
act on; each subclass has a stable `code` that machines may rely on and an HTTP status. The API maps
every one of them, once, to one JSON shape (`api.py`); pages show the message as a form error, and
commands print it and exit non-zero. Codes never change once released: add a new one instead.
"""

from typing import Any, ClassVar


class SafegroundError(Exception):
    """Refused input or a refused request: nothing was written."""

    code: ClassVar[str] = "invalid"
    status: ClassVar[int] = 400

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field
        self.message = message

    def to_json(self) -> dict[str, Any]:
        return error_body(self.code, self.field, self.message)


class NotFound(SafegroundError):
    code = "not_found"
    status = 404


class Forbidden(SafegroundError):
    code = "forbidden"
    status = 403


class Unavailable(SafegroundError):
    """The database could not be reached in time: nothing was written, and the same request may
    be sent again after the answer's Retry-After (a scan with the same nonce is stored once)."""

    code = "unavailable"
    status = 503


class TooLarge(SafegroundError):
    """A request body over the limit for its route: refused before it is read whole."""

    code = "too_large"
    status = 413


class FileRefused(SafegroundError):
    """A whole file refused (tickets, a venue): every problem is listed, one per line."""

    def __init__(self, errors: list[str]) -> None:
        super().__init__("file", "\n".join(errors))
        self.errors = errors


def error_body(code: str, field: str, detail: str) -> dict[str, Any]:
    """The one JSON shape of every 4xx answer: `{"code", "field", "detail"}`."""
    return {"code": code, "field": field, "detail": detail}
