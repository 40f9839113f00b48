from django.urls import path

from . import views

urlpatterns = [
    path("fixtures/<int:fixture_id>/control/", views.control_room, name="control_room"),
]
