"""One error type for everything Safeground refuses.

A service raises a `SafegroundError` subclass naming the field at fault and a message a person can
act on; each subclass has a stable `code` that machines may rely on and an HTTP status. The API maps
every one of them, once, to one JSON shape (`api.py`); pages show the message as a form error, and
commands print it and exit non-zero. Codes never change once released: add a new one instead.
"""

import json
import logging
import time
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any, ClassVar, cast

from django.conf import settings
from django.core.exceptions import BadRequest, RequestDataTooBig, SuspiciousOperation
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.http.multipartparser import MultiPartParserError
from django.shortcuts import render
from django.urls import Resolver404, resolve
from django.utils import timezone, translation
from django.utils.functional import lazy
from django.utils.translation import gettext, gettext_lazy, gettext_noop

from safeground.disk_full import storage_full
from safeground.outage import outage

logger = logging.getLogger(__name__)


class SafegroundError(Exception):
    """Refused input or a refused request: nothing was written."""

    code: ClassVar[str] = "invalid"
    # The answer's status is the class's alone, the same on a page, in the API and in a command:
    # a refusal that is well formed but refused by the state of things (an incident already
    # closed, more than the zone holds) is a subclass with 409, one naming what is not there 404,
    # one not yours to do 403; a subclass keeps its parent's code (ADR 0021).
    status: ClassVar[int] = 400

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field
        self.message = message

    def to_json(self) -> dict[str, Any]:
        return error_body(self.code, self.field, self.message)


def at_most(limit: int) -> str:
    """The refusal of a text over its limit, in the reader's language (one wording everywhere)."""
    return gettext("at most %(limit)s characters") % {"limit": limit}


def too_long(length: int, limit: int) -> str:
    """As at_most, saying how long the text was."""
    return gettext("is %(length)s characters; at most %(limit)s") % {
        "length": length,
        "limit": limit,
    }


def one_of(values: Iterable[str]) -> str:
    """The refusal of a value not among those allowed, naming them (one wording everywhere)."""
    return gettext("one of %(values)s") % {"values": ", ".join(values)}


def erased_by_retention(what: str, erased_at: datetime, sha256: str) -> str:
    """Why a file is not there: retention deleted it (ADR 0011). The day is London's, as the
    pages show it (a run at 00:30 BST is that day, not the UTC day before); the hash stays."""
    day = timezone.localdate(erased_at)
    return gettext(
        "%(what)s was erased by retention on %(day)s; its SHA-256 %(sha256)s is kept"
    ) % {
        "what": what,
        "day": f"{day:%d/%m/%Y}",
        "sha256": sha256,
    }


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


class StorageFull(Unavailable):
    """The server's disk is full or its database refuses writes (safeground.disk_full): nothing
    was stored, reads still work, and the same request may be sent again after Retry-After."""

    def __init__(self, field: str = "", message: str = "") -> None:
        super().__init__(field, message or str(STORAGE_FULL))


def refusal_for(error: BaseException) -> "StorageFull | None":
    """The 503 for an error that says nothing can be stored just now, or None (the caller
    handles it as before); logged as one line, not a traceback per request."""
    if not storage_full(error):
        return None
    global _full_said_at
    now = time.monotonic()
    if now - _full_said_at >= FULL_SAID_EVERY:
        _full_said_at = now
        first = (str(error).strip().splitlines() or [type(error).__name__])[0]
        logger.error("nothing can be stored (refused with 503 until space returns): %s", first)
    return StorageFull()


FULL_SAID_EVERY = 10.0  # seconds between the lines saying writes are refused for want of space
_full_said_at = float("-inf")


class TooManyRequests(SafegroundError):
    """Over a limit (safeground.limits): the answer's Retry-After says when to send again."""

    code = "too_many_requests"
    status = 429

    def __init__(self, field: str, message: str, *, retry_after: int) -> None:
        super().__init__(field, message)
        self.retry_after = max(1, retry_after)


def retry_after(error: SafegroundError) -> int | None:
    """The seconds a refusal asks its sender to wait (its answer's Retry-After), or None: every
    429 and 503, on a page, from the API and at the door, says the same."""
    if isinstance(error, TooManyRequests):
        return error.retry_after
    if isinstance(error, Unavailable):
        return int(settings.SAFEGROUND_RETRY_AFTER_SECONDS)
    return None


class TooLarge(SafegroundError):
    """A request body over the limit for its route: refused before it is read whole."""

    code = "too_large"
    status = 413


class NulCharacter(SafegroundError):
    """Text with a NUL character (U+0000): PostgreSQL cannot store it, and no person types it."""

    code = "nul_character"


class UnreadableBody(SafegroundError):
    """A body that cannot be read as its Content-Type says: a multipart body without its
    boundary, a charset nobody knows, a form sent to a route that takes JSON."""

    code = "unreadable_body"


class OutOfRange(SafegroundError):
    """A whole number beyond what the database stores (an id past 2^63 - 1)."""

    code = "out_of_range"


class FileRefused(SafegroundError):
    """A whole file refused (tickets, a venue): every problem is listed, one per line."""

    def __init__(self, errors: list[str]) -> None:
        super().__init__("file", "\n".join(errors))
        self.errors = errors


def answers(*errors: type[SafegroundError]) -> dict[str, Any]:
    """A route's `openapi_extra` for the refusals it gives beyond the ones every operation
    documents (safeground/api.py): each error's status, described by its docstring, in the one
    error shape. `@router.post(..., openapi_extra=answers(PlanChanged))`."""
    ref = {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}
    documented: dict[str, Any] = {}
    for error in errors:
        description = " ".join((error.__doc__ or error.code).split())
        documented[str(error.status)] = {"description": f"`{error.code}`: {description}", **ref}
    return {"responses": documented}


# Every body and parameter is refused with a NUL character in it (RequestChecks: PostgreSQL's text
# cannot hold one), so every free string of the API's schema says so (safeground/api.py).
WITHOUT_NUL = r"^[^\x00]*$"


def said(least: int = 1) -> str:
    """A schema pattern for text the service reads stripped of the spaces at its ends: at least
    `least` characters once stripped, and no NUL (a reason, a note that must say something)."""
    if least == 1:
        return r"^[^\x00]*[^\s\x00][^\x00]*$"
    return rf"^\s*[^\s\x00][^\x00]{{{least - 2},}}[^\s\x00]\s*$"


def error_body(code: str, field: str, detail: str) -> dict[str, Any]:
    """The one JSON shape of every 4xx answer: `{"code", "field", "detail"}`."""
    return {"code": code, "field": field, "detail": detail}


# --- the checks every Django request passes first -----------------------------------------------


class RequestChecks:
    """The first middleware: refuses, before anything reads a session or the database, a body
    over its limit (413), a form or multipart body that cannot be read (400, `unreadable_body`)
    and text holding a NUL character (400 naming the field), in the one error shape under /api/
    and as a short text page elsewhere, never a 500 or a traceback. On the way out, any API
    answer of 400 or more that is not JSON (Django's own 404 and 405, its 500 page) is put in
    the one shape too, so a client of /api/ never has to read HTML.

    One check here rather than a validator on each schema and form: it covers every Django route
    alike (JSON bodies, forms, query strings: log text, broadcasts, posts, the bundle's
    turnstile, filters, logins), including routes added later. The lean scan route, which
    bypasses Django, checks its own fields (entry/api.py, scan_input) and its size
    (entry/runtime/asgi.py). Of a multipart body (a photo upload) the text fields are checked,
    not the files.

    With DEBUG on (`make run`), a page's ordinary not-found is the plain 404 page too, not
    Django's technical one listing every address of the site: an address nothing answers
    (no resolver match) and a view's Http404 (process_exception).
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        api = request.path.startswith("/api/")
        if settings.DEBUG and isinstance(exception, Http404) and not api:
            return _plain_not_found(request)
        full = refusal_for(exception)
        if full is not None:  # a page's write met a full disk: its form may be sent again
            return text_answer(full)
        return None

    def __call__(self, request: HttpRequest) -> HttpResponse:
        refusal = (
            _database_away()
            or _waited_too_long(request)
            or _too_large(request)
            or _nul_character(request)
        )
        if refusal is None:
            response = self.get_response(request)
            if response.status_code == 503 and "Retry-After" not in response:
                # Every 503 says when to try again: a page's refusal (a full disk) as the API's.
                response["Retry-After"] = str(settings.SAFEGROUND_RETRY_AFTER_SECONDS)
            if request.path.startswith("/api/") and not _json_or_fine(response):
                with translation.override(translation.get_language_from_request(request)):
                    return _in_the_one_shape(response)
            if settings.DEBUG and response.status_code == 404 and request.resolver_match is None:
                return _plain_not_found(request)
            return response
        # This runs before LocaleMiddleware: the asker's language is found for a refusal only,
        # and the refusal's words (said_later) are made in it as the answer is written.
        with translation.override(translation.get_language_from_request(request)):
            if request.path.startswith("/api/"):
                answer: HttpResponse = JsonResponse(refusal.to_json(), status=refusal.status)
            else:
                answer = text_answer(refusal)
        wait = retry_after(refusal)
        if wait is not None:
            answer["Retry-After"] = str(wait)
        return answer


def _plain_not_found(request: HttpRequest) -> HttpResponse:
    return render(request, "404.html", status=404)


def _json_or_fine(response: HttpResponse) -> bool:
    return response.status_code < 400 or response.get("Content-Type", "").startswith(
        "application/json"
    )


# Django's own answers that no API route wrote: each in the one shape, with a stable code.
DJANGO_ANSWERS = {
    400: ("bad_request", gettext_noop("the request cannot be read")),
    403: ("forbidden", gettext_noop("your role may not do this")),
    404: ("not_found", gettext_noop("no such API route")),
    405: ("method_not_allowed", gettext_noop("this route does not take that method (see Allow)")),
    500: (
        "server_error",
        gettext_noop("the server failed to answer; the request may be sent again"),
    ),
}


def _in_the_one_shape(response: HttpResponse) -> HttpResponse:
    code, detail = DJANGO_ANSWERS.get(response.status_code, ("refused", gettext_noop("refused")))
    answer = JsonResponse(error_body(code, "", gettext(detail)), status=response.status_code)
    for header in ("Allow", "Retry-After"):
        if header in response:
            answer[header] = response[header]
    return answer


def text_answer(error: SafegroundError) -> HttpResponse:
    """A refusal outside the API: a short text naming the field, with the error's status."""
    text = f"{error.field}: {error.message}" if error.field else error.message
    answer = HttpResponse(text, status=error.status, content_type="text/plain; charset=utf-8")
    wait = retry_after(error)
    if wait is not None:
        answer["Retry-After"] = str(wait)
    return answer


# The moment the server read a request (safeground.asgi stamps it on the ASGI scope, which a2wsgi
# hands on as environ["asgi.scope"]), before it queued for an HTTP thread.
ARRIVED = "safeground.arrived"


STORAGE_FULL = gettext_lazy(
    "Safeground cannot store anything just now (its disk is full or its database refuses "
    "writes): nothing was stored; what is already stored can still be read. Try again later."
)

DATABASE_AWAY = gettext_lazy(
    "Safeground cannot reach its database just now: nothing was stored; try again."
)


def said_later(words: Callable[[], str]) -> str:
    """Words made when they are read (written into the answer), not now: the door's checks run
    before the asker's language is known (RequestChecks)."""
    return cast(str, lazy(words, str)())


def _database_away() -> SafegroundError | None:
    """While an outage is known (safeground.outage) a request is refused at once, not after
    waiting SAFEGROUND_DATABASE_WAIT_SECONDS for a connection on an HTTP thread: the threads stay
    free, the refusals come fast, and no backlog of waiting requests delays the first ones after
    the database's return (bench_faults: entries back 6 s after a 25 s cut)."""
    if not outage.refusing:
        return None
    outage.refused("database away")
    return Unavailable("", cast(str, DATABASE_AWAY))


def _waited_too_long(request: HttpRequest) -> SafegroundError | None:
    arrived = request.META.get("asgi.scope", {}).get(ARRIVED)
    if arrived is None:
        return None
    waited = time.monotonic() - arrived
    if waited <= settings.SAFEGROUND_QUEUE_WAIT_SECONDS:
        return None
    return Unavailable(
        "",
        said_later(
            lambda: (
                gettext("the server is overloaded (the request waited %(seconds)s s)")
                % {"seconds": f"{waited:.1f}"}
            )
        ),
    )


def large_uploads(limit: Callable[[], int]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Marks a view that takes uploads over SAFEGROUND_MAX_UPLOAD_BYTES (evidence video): `limit`
    gives its own limit in bytes, read at each request (the view still checks each file)."""

    def mark(view: Callable[..., Any]) -> Callable[..., Any]:
        view.upload_limit = limit  # type: ignore[attr-defined]
        return view

    return mark


def _upload_limit(request: HttpRequest) -> int:
    limit = settings.SAFEGROUND_MAX_UPLOAD_BYTES
    try:
        own = getattr(resolve(request.path_info).func, "upload_limit", None)
    except Resolver404:
        return limit
    return max(limit, own()) if own else limit


def _too_large(request: HttpRequest) -> SafegroundError | None:
    try:
        size = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return None  # Django refuses it as it reads the body
    if request.content_type == "multipart/form-data":
        limit = settings.SAFEGROUND_MAX_UPLOAD_BYTES
        if size > limit:  # only an upload already over the common limit pays to find its view
            limit = _upload_limit(request)
    else:
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    if limit is not None and size > limit:
        return TooLarge(
            "body",
            said_later(
                lambda: (
                    gettext("the request body is %(size)s bytes; at most %(limit)s")
                    % {"size": size, "limit": limit}
                )
            ),
        )
    return None


NUL = "\x00"
WITHOUT_NUL_WORDS = cast(str, gettext_lazy("must not contain a NUL character"))


def _nul_character(request: HttpRequest) -> SafegroundError | None:
    query = request.META.get("QUERY_STRING", "")
    if "%00" in query or NUL in query:
        for name, values in request.GET.lists():
            if NUL in name or any(NUL in value for value in values):
                return NulCharacter(name.replace(NUL, ""), WITHOUT_NUL_WORDS)
    if request.method in ("GET", "HEAD", "OPTIONS"):
        return None
    if request.content_type in ("application/x-www-form-urlencoded", "multipart/form-data"):
        # Parsed here as CSRF's check would parse them; a multipart's files are not looked in.
        try:
            fields = request.POST
        except RequestDataTooBig:  # its text fields alone are over the limit
            limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
            return TooLarge(
                "body",
                said_later(
                    lambda: gettext("the form's fields are over %(limit)s bytes") % {"limit": limit}
                ),
            )
        except (BadRequest, SuspiciousOperation, MultiPartParserError) as error:
            reason = str(error)  # the lambda is called after `error` is gone
            return UnreadableBody(
                "body",
                said_later(
                    lambda: (
                        gettext("cannot be read as %(type)s: %(error)s")
                        % {"type": request.content_type, "error": reason}
                    )
                ),
            )
        except (LookupError, UnicodeDecodeError):  # a charset unknown, or not the one named
            return UnreadableBody(
                "body",
                said_later(
                    lambda: (
                        gettext("is not in the charset %(charset)s") % {"charset": request.encoding}
                    )
                ),
            )
        for name, values in fields.lists():
            if NUL in name or any(NUL in value for value in values):
                return NulCharacter(name.replace(NUL, ""), WITHOUT_NUL_WORDS)
        return None
    body = request.body
    if b"\\u0000" in body or b"\x00" in body:  # JSON writes NUL as \u0000
        try:
            field = _nul_in(json.loads(body), "")
        except ValueError:
            field = "body"
        if field is not None:
            return NulCharacter(field, WITHOUT_NUL_WORDS)
    return None


def _nul_in(value: Any, path: str) -> str | None:
    """The path of the first text holding NUL in a JSON value (`scans[3].barcode`), or None."""
    if isinstance(value, str):
        return path if NUL in value else None
    if isinstance(value, dict):
        for key, item in value.items():
            name = f"{path}.{key}" if path else str(key)
            if NUL in key:
                return name.replace(NUL, "")
            found = _nul_in(item, name)
            if found is not None:
                return found
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found = _nul_in(item, f"{path}[{index}]")
            if found is not None:
                return found
    return None
