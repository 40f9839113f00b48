from django.urls import path

from . import views

urlpatterns = [
    path("fixtures/<int:fixture_id>/decisions/", views.decision_log_page, name="decisions"),
    path("fixtures/<int:fixture_id>/decisions.pdf", views.decision_log_pdf, name="decisions_pdf"),
    path(
        "fixtures/<int:fixture_id>/decisions/<int:decision_id>/amend/",
        views.decision_amend_page,
        name="decisions_amend",
    ),
    path(
        "fixtures/<int:fixture_id>/decisions/<int:decision_id>/review/",
        views.decision_review_view,
        name="decisions_review",
    ),
    path(
        "fixtures/<int:fixture_id>/decisions/banner/",
        views.decisions_banner,
        name="decisions_banner",
    ),
    path("fixtures/<int:fixture_id>/radio/", views.radio_switch, name="decisions_radio"),
    path(
        "fixtures/<int:fixture_id>/major-incident/",
        views.major_incident_page,
        name="major_incident",
    ),
    path(
        "fixtures/<int:fixture_id>/major-incident/declare/",
        views.major_incident_declare,
        name="major_incident_declare",
    ),
    path(
        "fixtures/<int:fixture_id>/major-incident/<int:report_id>/correct/",
        views.methane_correct,
        name="methane_correct",
    ),
    # Under the steward page's folder: the phone's radio-down banner.
    path(
        "fixtures/<int:fixture_id>/steward/radio/",
        views.steward_radio_banner,
        name="decisions_steward_banner",
    ),
]
