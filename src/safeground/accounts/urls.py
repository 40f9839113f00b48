from django.urls import path

from . import views

urlpatterns = [
    path("account/devices/", views.devices, name="devices"),
    path(
        "account/devices/<int:device_id>/revoke/",
        views.device_revoke_page,
        name="device_revoke",
    ),
]
