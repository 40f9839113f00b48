from django.urls import path

from . import views

urlpatterns = [
    path("grounds/<slug:code>/", views.ground, name="ground"),
    path("grounds/<slug:code>/capacity/", views.capacity, name="ground_capacity"),
]
