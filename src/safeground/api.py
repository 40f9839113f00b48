"""The machine API under /api/ (schema at /api/openapi.json); each app adds its router.

Every 4xx answer has one JSON shape, `{"code", "field", "detail"}` (`safeground.errors`), mapped
here once: a refused input (`SafegroundError`), a body that does not fit the schema, a missing
login, a role that may not, and a missing object; so are a body over the size limit (413), a
person over a limit (429 with Retry-After, safeground.limits) and a database that cannot be
reached (503 with Retry-After), never a 500 or a traceback.
"""

import copy
import json
import threading
from typing import Any, cast

from django.conf import settings
from django.core.exceptions import PermissionDenied, RequestDataTooBig
from django.db import InterfaceError, InternalError, OperationalError
from django.http import Http404, HttpRequest, HttpResponse
from django.http.request import RawPostDataException
from django.utils.datastructures import MultiValueDict
from django.utils.translation import gettext, gettext_lazy, gettext_noop
from ninja import NinjaAPI, Schema
from ninja.errors import AuthenticationError, HttpError, Throttled, ValidationError
from ninja.parser import Parser
from ninja.throttling import BaseThrottle

from safeground.accounts.api import router as accounts_router
from safeground.accounts.models import User
from safeground.alerts.api import router as alerts_router
from safeground.bans.api import router as register_router
from safeground.casework.api import router as casework_router
from safeground.decisions.api import router as decisions_router
from safeground.deployment.api import router as deployment_router
from safeground.entry.api import router as entry_router
from safeground.errors import (
    WITHOUT_NUL,
    OutOfRange,
    SafegroundError,
    TooLarge,
    TooManyRequests,
    Unavailable,
    UnreadableBody,
    error_body,
    refusal_for,
    retry_after,
    said_later,
)
from safeground.exchange.api import router as exchange_router
from safeground.incidents.api import router as log_router
from safeground.limits import Limit
from safeground.matches.api import router as matches_router
from safeground.outage import outage
from safeground.partners.api import router as partners_router
from safeground.reports.api import router as reports_router


class ErrorOut(Schema):
    code: str
    field: str
    detail: str


ERROR_ANSWERS = {
    "400": "Refused input: `field` names what is wrong",
    "401": "No login or device key",
    "403": "Your role may not do this",
    "404": "No such object, or not one you may see: an id in the path, or a name in the body "
    "(a turnstile, an organisation, a layout, a category, a place, a person): `field` says which",
    "409": "Well formed, but refused by the state of things (an incident already closed, more "
    "than the away zone holds, a plan changed since): `field` and `detail` say which",
    "413": "The request body is over the size limit",
    "429": "Over a limit (SAFEGROUND_LIMITS): try again after Retry-After",
    "422": "The body or query does not fit the schema",
    "503": "The database did not answer in time: try again after Retry-After",
}


class StrictParser(Parser):
    """A request is read as its schema says: a JSON body is an object (ninja would otherwise read
    a bare number or list as an object whose fields all take their defaults), and a query
    parameter that is not a list comes once (ninja would take the last of several)."""

    def parse_querydict(
        self, data: MultiValueDict, list_fields: list[str], request: HttpRequest
    ) -> dict[str, Any]:
        for key, values in data.lists():
            if key not in list_fields and len(values) > 1:
                message = gettext("%(name)s: give it once, not %(count)s times") % {
                    "name": key,
                    "count": len(values),
                }
                raise HttpError(400, message)
        return super().parse_querydict(data, list_fields, request)

    def parse_body(self, request: HttpRequest) -> Any:
        data = super().parse_body(request)
        if not isinstance(data, dict):
            raise ValueError(gettext("the body must be a JSON object"))
        return data


class SafegroundAPI(NinjaAPI):
    def get_openapi_schema(self, **kwargs: Any) -> Any:
        """Every operation documents the error answers, all with the one error shape."""
        schema = super().get_openapi_schema(**kwargs)
        # The paths copied: the routes' `openapi_extra` bodies are in them by reference, and
        # moving their `$defs` out would leave the next call's schema without those definitions.
        schema["paths"] = copy.deepcopy(schema["paths"])
        components = schema.setdefault("components", {}).setdefault("schemas", {})
        components["Error"] = ErrorOut.model_json_schema()
        _defs_to_components(schema, components)
        _what_the_database_holds(schema)
        ref = {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}
        for operations in schema.get("paths", {}).values():
            for operation in operations.values():
                answers = operation.setdefault("responses", {})
                for status, description in ERROR_ANSWERS.items():
                    answers.setdefault(status, {"description": description, **ref})
        return schema


def _defs_to_components(node: Any, components: dict[str, Any]) -> None:
    """A body documented by its model's own JSON schema (`openapi_extra`, for the routes that
    read JSON by hand) keeps pydantic's nested models and enums under its `$defs`, which
    nothing resolves from an OpenAPI document: each goes to components/schemas and its
    references with it."""
    if isinstance(node, dict):
        for name, definition in node.pop("$defs", {}).items():
            _defs_to_components(definition, components)
            if components.setdefault(name, definition) != definition:
                raise ValueError(f"two different schemas are called {name}")
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            node["$ref"] = "#/components/schemas/" + ref.removeprefix("#/$defs/")
        mapping = node.get("discriminator", {}).get("mapping", {})
        for value, target in mapping.items():  # a discriminated union's kinds
            mapping[value] = target.replace("#/$defs/", "#/components/schemas/")
        for value in list(node.values()):
            _defs_to_components(value, components)
    elif isinstance(node, list):
        for value in node:
            _defs_to_components(value, components)


def _what_the_database_holds(node: Any) -> None:
    """Every free string says it holds no NUL (errors.WITHOUT_NUL; one with a format, a pattern or
    a list of values already says more), and every integer is one a 64-bit column holds (more is
    refused as `out_of_range`)."""
    if isinstance(node, dict):
        if node.get("type") == "string" and not {"format", "pattern", "enum", "const"} & set(node):
            node["pattern"] = WITHOUT_NUL
        if node.get("type") == "integer":
            node.setdefault("maximum", 2**63 - 1)
            node.setdefault("minimum", -(2**63))
        for value in node.values():
            _what_the_database_holds(value)
    elif isinstance(node, list):
        for value in node:
            _what_the_database_holds(value)


API_PERSON = Limit("api.person")


class PerPerson(BaseThrottle):
    """Each signed-in person's API calls, at SAFEGROUND_LIMITS["api.person"] (safeground.limits).
    A call with a device key is not counted: the turnstiles' scans keep their own bounds (ADR
    0005)."""

    def __init__(self) -> None:
        # ninja keeps one throttle for every request: each thread keeps its own refusal.
        self._call = threading.local()

    def allow_request(self, request: HttpRequest) -> bool:
        caller = getattr(request, "auth", None)
        if not isinstance(caller, User):
            return True  # a device, or nobody (refused before this)
        try:
            API_PERSON.count(
                caller.pk,
                field="",
                message=said_later(
                    lambda: (
                        gettext("more than %(rate)s API calls from you: wait, then send again")
                        % {"rate": API_PERSON.rate}
                    )
                ),
            )
        except TooManyRequests as refusal:
            self._call.refusal = refusal
            return False
        return True

    def wait(self) -> float:
        return float(self.refusal().retry_after)

    def refusal(self) -> TooManyRequests:
        """This thread's last refusal (ninja answers it as Throttled)."""
        return cast(TooManyRequests, self._call.refusal)


PER_PERSON = PerPerson()


DESCRIPTION = """Every refusal has one JSON body, `{"code", "field", "detail"}` (schema `Error`):
`code` is stable (machines may rely on it; a code never changes once released), `field` names
the input at fault (`scans[3].barcode`, `body`; empty when no one field is), `detail` is for a
person. 400 refused input, 401 no login or device key, 403 your role may not, 404 no such object
(or not one you may see), 413 body over its limit, 422 body or query not as this schema says,
429 and 503 with Retry-After."""

api = SafegroundAPI(
    title="Safeground",
    version="1",
    description=DESCRIPTION,
    urls_namespace="api",
    throttle=[PER_PERSON],
    parser=StrictParser(),
)
api.add_router("/", accounts_router)
api.add_router("/", matches_router)
api.add_router("/", log_router)
api.add_router("/", entry_router)
api.add_router("/", reports_router)
api.add_router("/", casework_router)
api.add_router("/", deployment_router)
api.add_router("/", decisions_router)
api.add_router("/", alerts_router)
api.add_router("/", partners_router)
api.add_router("/", register_router)
api.add_router("/", exchange_router)


def _answer(request: HttpRequest, status: int, code: str, field: str, detail: str) -> HttpResponse:
    return api.create_response(request, error_body(code, field, detail), status=status)


@api.exception_handler(SafegroundError)
def refused(request: HttpRequest, exc: SafegroundError) -> HttpResponse:
    response = _answer(request, exc.status, exc.code, exc.field, exc.message)
    wait = retry_after(exc)
    if wait is not None:
        response["Retry-After"] = str(wait)
    return response


DATABASE_UNAVAILABLE = gettext_lazy(
    "The database did not answer in time: nothing was stored; try again."
)


@api.exception_handler(OperationalError)
@api.exception_handler(InterfaceError)
def database_unavailable(request: HttpRequest, exc: Exception) -> HttpResponse:
    """The database is down, unreachable or its pool had no connection in time
    (SAFEGROUND_DATABASE_WAIT_SECONDS): the request's transaction did not commit. Logged once
    per outage (safeground.outage), not per request. A full disk is not an outage: its own 503."""
    full = refusal_for(exc)
    if full is not None:
        return refused(request, full)
    outage.refused(exc)
    return refused(request, Unavailable("", str(DATABASE_UNAVAILABLE)))


@api.exception_handler(InternalError)
@api.exception_handler(OSError)
def nothing_stored(request: HttpRequest, exc: Exception) -> HttpResponse:
    """A file's write met a full disk, or PostgreSQL refuses writes (a read-only database or
    role, InternalError 25006): a 503 with Retry-After (safeground.disk_full). Any other such
    error is a fault of ours, the 500 it always was."""
    full = refusal_for(exc)
    if full is None:
        raise exc
    return refused(request, full)


@api.exception_handler(RequestDataTooBig)
def too_large(request: HttpRequest, exc: RequestDataTooBig) -> HttpResponse:
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    detail = gettext("the request body is over %(limit)s bytes") % {"limit": limit}
    return refused(request, TooLarge("body", detail))


@api.exception_handler(RawPostDataException)
def form_sent_to_a_json_route(request: HttpRequest, exc: RawPostDataException) -> HttpResponse:
    """A multipart body sent to a route that takes JSON: the door (RequestChecks) has read it
    as a form, so there is no JSON left to read."""
    detail = gettext("this route takes JSON (Content-Type: application/json), not a form")
    return refused(request, UnreadableBody("body", detail))


# SQLite stores integers up to 2^63 - 1 and refuses a bigger one in a query with OverflowError.
LARGEST = 2**63 - 1


@api.exception_handler(OverflowError)
def number_out_of_range(request: HttpRequest, exc: OverflowError) -> HttpResponse:
    """An id or count past what the database holds (`{"entries": [10**30]}`, found by the schema
    fuzzing): a 400 naming it, never a 500. Nothing was written: each service is one
    transaction, rolled back by the error."""
    detail = gettext("must be at most %(largest)s") % {"largest": LARGEST}
    return refused(request, OutOfRange(_too_big(request), detail))


def _too_big(request: HttpRequest) -> str:
    """Where the number too big for the database is: a path or query parameter, or a body
    field (`entries[3]`); "" if it cannot be told."""
    match = request.resolver_match
    for name, value in [*(match.kwargs.items() if match else ()), *request.GET.items()]:
        if str(value).lstrip("-").isdigit() and abs(int(value)) > LARGEST:
            return name
    try:
        body = json.loads(request.body) if request.body else None
    except ValueError:
        return ""
    return _big_in(body, "") or ""


def _big_in(value: Any, path: str) -> str | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return path if abs(value) > LARGEST else None
    items = (
        value.items()
        if isinstance(value, dict)
        else enumerate(value)
        if isinstance(value, list)
        else ()
    )
    for key, item in items:
        name = f"{path}[{key}]" if isinstance(key, int) else f"{path}.{key}" if path else key
        found = _big_in(item, name)
        if found is not None:
            return found
    return None


@api.exception_handler(PermissionDenied)
def permission_denied(request: HttpRequest, exc: PermissionDenied) -> HttpResponse:
    return _answer(request, 403, "forbidden", "", str(exc) or gettext("Your role may not do this."))


@api.exception_handler(Http404)
def not_found(request: HttpRequest, exc: Http404) -> HttpResponse:
    return _answer(request, 404, "not_found", "", str(exc) or gettext("Not found."))


@api.exception_handler(HttpError)
def http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
    code = {401: "unauthorized", 403: "forbidden", 404: "not_found"}.get(exc.status_code, "refused")
    if isinstance(exc, Throttled):  # the one throttle, PerPerson
        return refused(request, PER_PERSON.refusal())
    if isinstance(exc, AuthenticationError):  # ninja's own words, "Unauthorized"
        return _answer(request, 401, code, "", gettext("Unauthorized"))
    return _answer(request, exc.status_code, code, "", str(exc))


@api.exception_handler(ValidationError)
def schema_mismatch(request: HttpRequest, exc: ValidationError) -> HttpResponse:
    """Pydantic's errors, each as `field: message` in the asker's language; `field` is the first
    one's (the fields' paths and the code never change)."""
    problems = [
        (".".join(str(part) for part in error.get("loc", ())[1:]), schema_words(error))
        for error in exc.errors
    ]
    field = problems[0][0] if problems else ""
    detail = "; ".join(f"{name}: {message}" if name else message for name, message in problems)
    return _answer(request, 422, "invalid_request", field, detail or gettext("invalid request"))


# Pydantic's error types (https://docs.pydantic.dev/latest/errors/validation_errors/) as the
# asker reads them; a slot is the error's `ctx` value of that name. A type not listed keeps
# pydantic's English.
SCHEMA_WORDS: dict[str, str] = {
    "missing": gettext_noop("is required"),
    "extra_forbidden": gettext_noop("is not a field of this request"),
    "string_type": gettext_noop("must be a string"),
    "string_too_short": gettext_noop("must be at least %(min_length)s characters"),
    "string_too_long": gettext_noop("must be at most %(max_length)s characters"),
    "string_pattern_mismatch": gettext_noop("is not in the form this field takes"),
    "int_type": gettext_noop("must be a whole number"),
    "int_parsing": gettext_noop("must be a whole number"),
    "int_from_float": gettext_noop("must be a whole number"),
    "float_type": gettext_noop("must be a number"),
    "float_parsing": gettext_noop("must be a number"),
    "bool_type": gettext_noop("must be true or false"),
    "bool_parsing": gettext_noop("must be true or false"),
    "greater_than": gettext_noop("must be greater than %(gt)s"),
    "greater_than_equal": gettext_noop("must be at least %(ge)s"),
    "less_than": gettext_noop("must be less than %(lt)s"),
    "less_than_equal": gettext_noop("must be at most %(le)s"),
    "literal_error": gettext_noop("must be %(expected)s"),
    "enum": gettext_noop("must be %(expected)s"),
    "uuid_type": gettext_noop("must be a UUID"),
    "uuid_parsing": gettext_noop("must be a UUID"),
    "datetime_type": gettext_noop("must be an ISO 8601 time"),
    "datetime_parsing": gettext_noop("must be an ISO 8601 time"),
    "datetime_from_date_parsing": gettext_noop("must be an ISO 8601 time"),
    "timezone_aware": gettext_noop("must carry a time zone (e.g. 2016-10-26T19:05+01:00)"),
    "date_type": gettext_noop("must be a date (YYYY-MM-DD)"),
    "date_parsing": gettext_noop("must be a date (YYYY-MM-DD)"),
    "date_from_datetime_parsing": gettext_noop("must be a date (YYYY-MM-DD)"),
    "time_type": gettext_noop("must be a time (HH:MM)"),
    "time_parsing": gettext_noop("must be a time (HH:MM)"),
    "list_type": gettext_noop("must be a list"),
    "too_short": gettext_noop("must have at least %(min_length)s items"),
    "too_long": gettext_noop("must have at most %(max_length)s items"),
    "dict_type": gettext_noop("must be an object"),
    "model_type": gettext_noop("must be an object"),
    "model_attributes_type": gettext_noop("must be an object"),
    "json_invalid": gettext_noop("is not valid JSON"),
    "url_parsing": gettext_noop("must be a URL"),
    "url_scheme": gettext_noop("must be a URL"),
    "decimal_parsing": gettext_noop("must be a number"),
    "union_tag_invalid": gettext_noop("must be %(expected_tags)s"),
    "union_tag_not_found": gettext_noop("must name its %(discriminator)s"),
}


def schema_words(error: dict[str, Any]) -> str:
    """One pydantic error's message in the active language, its slots from the error's ctx."""
    words = SCHEMA_WORDS.get(error.get("type", ""))
    if words is None:
        return str(error.get("msg", gettext("invalid")))
    slots = {name: str(value) for name, value in (error.get("ctx") or {}).items()}
    try:
        return gettext(words) % slots
    except KeyError:  # a ctx without the slot: pydantic's own words
        return str(error.get("msg", gettext("invalid")))
