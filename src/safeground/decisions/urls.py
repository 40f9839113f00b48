from django.urls import path

from . import closure_views, views

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
    # Closing a stand and evacuating it (issue 41).
    path(
        "fixtures/<int:fixture_id>/stands/<int:stand_id>/evacuation/",
        closure_views.stand_evacuation,
        name="decisions_stand_evacuation",
    ),
    path(
        "fixtures/<int:fixture_id>/stands/<int:stand_id>/evacuation/live/",
        closure_views.stand_evacuation_live,
        name="decisions_stand_evacuation_live",
    ),
    path(
        "fixtures/<int:fixture_id>/stands/panel/",
        closure_views.stands_panel,
        name="decisions_stands_panel",
    ),
    path(
        "fixtures/<int:fixture_id>/stands/alarm/",
        closure_views.stands_alarm,
        name="decisions_stands_alarm",
    ),
]
