from django.urls import path

from . import views

urlpatterns = [
    path("fixtures/<int:fixture_id>/partners/", views.partners_told, name="partners_told"),
    path(
        "fixtures/<int:fixture_id>/partners/panel/",
        views.partners_panel,
        name="partners_panel",
    ),
]
