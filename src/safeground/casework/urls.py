from django.urls import path

from . import views

urlpatterns = [
    path("fixtures/<int:fixture_id>/casework/", views.casework_fixture, name="casework_fixture"),
    path("fixtures/<int:fixture_id>/evidence/", views.evidence_locker, name="evidence_locker"),
    path(
        "fixtures/<int:fixture_id>/evidence/add/",
        views.locker_evidence_add,
        name="locker_evidence_add",
    ),
    path(
        "fixtures/<int:fixture_id>/casework/entries/<int:entry_id>/arrest/",
        views.entry_arrest,
        name="entry_arrest",
    ),
    path("cases/<int:case_id>/", views.case, name="case"),
    path("cases/<int:case_id>/who-was-there/", views.case_who, name="case_who"),
    path("cases/<int:case_id>/subjects/", views.case_subject_add, name="case_subject_add"),
    path("cases/<int:case_id>/outcomes/", views.case_outcome, name="case_outcome"),
    path("cases/<int:case_id>/ban/", views.case_ban_propose, name="case_ban_propose"),
    path("cases/<int:case_id>/evidence/", views.case_evidence_add, name="case_evidence_add"),
    path("cases/<int:case_id>/close/", views.case_close, name="case_close"),
    path("cases/<int:case_id>/bundle.zip", views.case_bundle, name="case_bundle"),
    path("evidence/<int:evidence_id>/", views.evidence_file, name="evidence_file"),
    path("evidence/photos/<int:photo_id>/", views.evidence_photo, name="evidence_photo"),
]
