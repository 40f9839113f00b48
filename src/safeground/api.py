"""The machine API under /api/ (schema at /api/openapi.json); each app adds its router."""

from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from ninja import NinjaAPI

from safeground.accounts.api import router as accounts_router
from safeground.entry.api import router as entry_router
from safeground.entry.services import ScanError
from safeground.incidents.api import router as log_router
from safeground.incidents.services import LogEntryError
from safeground.matches.api import router as matches_router

api = NinjaAPI(title="Safeground", version="1", urls_namespace="api")
api.add_router("/", accounts_router)
api.add_router("/", matches_router)
api.add_router("/", log_router)
api.add_router("/", entry_router)


@api.exception_handler(PermissionDenied)
def permission_denied(request: HttpRequest, exc: PermissionDenied) -> HttpResponse:
    return api.create_response(
        request, {"code": "forbidden", "detail": "Your role may not do this."}, status=403
    )


@api.exception_handler(LogEntryError)
def log_entry_error(request: HttpRequest, exc: LogEntryError) -> HttpResponse:
    return api.create_response(request, {"field": exc.field, "detail": exc.message}, status=400)


@api.exception_handler(ScanError)
def scan_error(request: HttpRequest, exc: ScanError) -> HttpResponse:
    return api.create_response(request, {"field": exc.field, "detail": exc.message}, status=400)
