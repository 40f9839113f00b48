from django.urls import path

from . import views

urlpatterns = [path("league/", views.league_record, name="league_record")]
