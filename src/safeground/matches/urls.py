from django.urls import path

from . import views

urlpatterns = [
    path("", views.home, name="home"),
    path("fixtures/<int:fixture_id>/", views.fixture, name="fixture"),
    path("grounds/<slug:code>/fixtures/new/", views.fixture_new, name="fixture_new"),
    path(
        "grounds/<slug:code>/fixtures/import/",
        views.fixtures_season_import,
        name="fixtures_season_import",
    ),
    path(
        "grounds/<slug:code>/fixtures/<int:fixture_id>/edit/",
        views.fixture_change,
        name="fixture_edit",
    ),
    path("fixtures/<int:fixture_id>/risk/", views.fixture_risk, name="fixture_risk"),
    path("fixtures/<int:fixture_id>/plan/", views.fixture_plan, name="fixture_plan"),
]
