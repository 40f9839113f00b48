from django.urls import path

from . import views

urlpatterns = [
    path("fixtures/<int:fixture_id>/control/", views.control_room, name="control_room"),
    path("fixtures/<int:fixture_id>/steward/", views.steward_page, name="steward_page"),
    path(
        "fixtures/<int:fixture_id>/steward/sw.js",
        views.steward_service_worker,
        name="steward_service_worker",
    ),
]
