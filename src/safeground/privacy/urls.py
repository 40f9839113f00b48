from django.urls import path

from . import views

urlpatterns = [
    # Under the register's person page, whose form posts here.
    path(
        "register/people/<int:person_id>/subject-access/",
        views.subject_access,
        name="subject_access",
    ),
    # A text-line phone's: the path it had under the supporters' pages, kept.
    path(
        "supporters/subject-access/",
        views.phone_subject_access,
        name="supporters_subject_access",
    ),
]
