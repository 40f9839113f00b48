import sys

from django.conf import settings
from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, HttpResponsePermanentRedirect, JsonResponse
from django.templatetags.static import static
from django.urls import include, path
from django.utils.translation import gettext
from django.views import defaults
from django.views.i18n import set_language

from safeground.accounts import views as account_views

from .api import DATABASE_UNAVAILABLE, api
from .errors import Unavailable, refusal_for, text_answer


def favicon(request: HttpRequest) -> HttpResponse:
    """What a browser asks for before it reads a page's <link rel=icon> (and tools that never
    read one): the same icon."""
    return HttpResponsePermanentRedirect(static("safeground/favicon-1.svg"))


urlpatterns = [
    # First: a stand's flood of reports to the seat pages tried some ninety patterns before
    # reaching theirs (86 us a report, 20 us first). Its paths are its own ("s/", "supporters/",
    # "seat-codes"), so no other route is shadowed.
    path("", include("safeground.supporters.urls")),
    path(
        "login/",
        auth_views.LoginView.as_view(
            template_name="accounts/login.html", redirect_authenticated_user=True
        ),
        name="login",
    ),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("account/2fa/", account_views.second_factor, name="second_factor"),
    path("i18n/setlang/", set_language, name="set_language"),
    path("", include("safeground.accounts.urls")),
    path("", include("safeground.matches.urls")),
    path("", include("safeground.venues.urls")),
    path("", include("safeground.incidents.urls")),
    path("", include("safeground.bans.urls")),
    path("", include("safeground.entry.urls")),
    path("", include("safeground.reports.urls")),
    path("", include("safeground.casework.urls")),
    path("", include("safeground.deployment.urls")),
    path("", include("safeground.decisions.urls")),
    path("", include("safeground.alerts.urls")),
    path("", include("safeground.partners.urls")),
    path("", include("safeground.privacy.urls")),
    path("", include("safeground.exchange.urls")),
    path("api/", api.urls),
    path("admin/", admin.site.urls),
    path("favicon.ico", favicon, name="favicon"),
]


def server_error(request: HttpRequest) -> HttpResponse:
    """Django's last resort, for what no view handled (DEBUG off): a database that cannot be
    reached, met in a middleware before any view (a session read), is a 503 with Retry-After,
    in the API's one shape under /api/; anything else is the plain 500 page."""
    error = sys.exc_info()[1]
    full = refusal_for(error) if error is not None else None
    if full is not None:  # met after the view: a session's save on a full disk
        if request.path.startswith("/api/"):
            answer: HttpResponse = JsonResponse(full.to_json(), status=full.status)
            answer["Retry-After"] = str(settings.SAFEGROUND_RETRY_AFTER_SECONDS)
            return answer
        return text_answer(full)
    if not isinstance(error, OperationalError | InterfaceError):
        return defaults.server_error(request)
    response: HttpResponse
    if request.path.startswith("/api/"):
        response = JsonResponse(Unavailable("", str(DATABASE_UNAVAILABLE)).to_json(), status=503)
    else:
        text = gettext("Safeground cannot reach its database just now. Try again in a few seconds.")
        response = HttpResponse(text, status=503, content_type="text/plain; charset=utf-8")
    response["Retry-After"] = str(settings.SAFEGROUND_RETRY_AFTER_SECONDS)
    return response


handler500 = server_error
