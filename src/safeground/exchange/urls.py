from django.urls import path

from . import views

urlpatterns = [
    path("league/", views.league_record, name="league_record"),
    path(
        "league/fixtures/<int:fixture_id>/check/",
        views.fixture_check,
        name="league_fixture_check",
    ),
]
