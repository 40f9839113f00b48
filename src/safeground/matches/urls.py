from django.urls import path

from . import views

urlpatterns = [
    path("", views.home, name="home"),
    path("fixtures/<int:fixture_id>/", views.fixture, name="fixture"),
]
