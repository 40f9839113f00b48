from django.urls import path

from . import views

urlpatterns = [
    path("fixtures/<int:fixture_id>/deployment/", views.deployment, name="deployment"),
    path(
        "fixtures/<int:fixture_id>/deployment/post/",
        views.deployment_post,
        name="deployment_post",
    ),
    path(
        "fixtures/<int:fixture_id>/deployment/checks/",
        views.deployment_checks_prepare,
        name="deployment_checks_prepare",
    ),
    path(
        "fixtures/<int:fixture_id>/deployment/comms-check/",
        views.deployment_comms_check,
        name="deployment_comms_check",
    ),
    path(
        "fixtures/<int:fixture_id>/deployment/checks/<int:check_id>/send-back/",
        views.deployment_check_send_back,
        name="deployment_check_send_back",
    ),
    path(
        "fixtures/<int:fixture_id>/deployment/ready/",
        views.deployment_ready,
        name="deployment_ready",
    ),
    path(
        "fixtures/<int:fixture_id>/deployment/photos/<int:result_id>/",
        views.check_photo,
        name="deployment_check_photo",
    ),
    path(
        "fixtures/<int:fixture_id>/deployment/panel/",
        views.control_room_panel,
        name="deployment_control_panel",
    ),
    # Under the steward page's folder: the phone's own fragment and its actions.
    path(
        "fixtures/<int:fixture_id>/steward/deployment/",
        views.steward_panel,
        name="deployment_steward_panel",
    ),
    path(
        "fixtures/<int:fixture_id>/steward/check-in/",
        views.steward_check_in_view,
        name="deployment_check_in",
    ),
    path(
        "fixtures/<int:fixture_id>/steward/checks/<int:check_id>/",
        views.steward_check_record,
        name="deployment_check_record",
    ),
    path("fixtures/<int:fixture_id>/briefing/", views.briefing, name="briefing"),
    path("fixtures/<int:fixture_id>/briefing.pdf", views.briefing_pdf, name="briefing_pdf"),
]
