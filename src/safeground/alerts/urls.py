from django.urls import path

from . import views

urlpatterns = [
    path(
        "fixtures/<int:fixture_id>/alerts/phone/",
        views.alerts_phone_panel,
        name="alerts_phone_panel",
    ),
    path(
        "fixtures/<int:fixture_id>/alerts/delivery/",
        views.alerts_delivery_panel,
        name="alerts_delivery_panel",
    ),
    path(
        "fixtures/<int:fixture_id>/alerts/overdue/",
        views.alerts_overdue_panel,
        name="alerts_overdue_panel",
    ),
]
