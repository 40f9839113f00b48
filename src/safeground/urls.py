from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from safeground.accounts import views as account_views

from .api import api

urlpatterns = [
    path(
        "login/",
        auth_views.LoginView.as_view(
            template_name="accounts/login.html", redirect_authenticated_user=True
        ),
        name="login",
    ),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("account/2fa/", account_views.second_factor, name="second_factor"),
    path("", include("safeground.matches.urls")),
    path("", include("safeground.venues.urls")),
    path("", include("safeground.incidents.urls")),
    path("", include("safeground.bans.urls")),
    path("", include("safeground.entry.urls")),
    path("", include("safeground.reports.urls")),
    path("", include("safeground.casework.urls")),
    path("", include("safeground.deployment.urls")),
    path("api/", api.urls),
    path("admin/", admin.site.urls),
]
