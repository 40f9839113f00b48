from django.urls import path

from . import views

urlpatterns = [
    path("register/", views.register, name="register"),
    path("register/propose/", views.propose, name="ban_propose"),
    path("register/people/<int:person_id>/", views.person, name="person"),
    path("register/bans/<int:ban_id>/decide/", views.decide, name="ban_decide"),
    path("register/bans/<int:ban_id>/appeal/", views.appeal, name="ban_appeal"),
    path("register/bans/<int:ban_id>/appeal/decide/", views.appeal_decide, name="appeal_decide"),
    path("register/access/", views.access_records, name="access_records"),
]
