from django.urls import path

from . import views

urlpatterns = [
    # Under the register's person page, whose form posts here.
    path(
        "register/people/<int:person_id>/subject-access/",
        views.subject_access,
        name="subject_access",
    ),
]
