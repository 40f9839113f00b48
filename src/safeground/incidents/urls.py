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
    path(
        "fixtures/<int:fixture_id>/log/checkpoints/",
        views.log_checkpoints,
        name="log_checkpoints",
    ),
    path(
        "fixtures/<int:fixture_id>/log/checkpoints.json",
        views.log_checkpoints_download,
        name="log_checkpoints_download",
    ),
    path(
        "fixtures/<int:fixture_id>/log/checkpoints/<int:entries>.json",
        views.log_checkpoint_download,
        name="log_checkpoint_download",
    ),
]
