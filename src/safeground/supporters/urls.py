from django.urls import path

from . import sms, triage_views, views

urlpatterns = [
    # Public: a seat's own page (its QR code's address), a report's status, the text line.
    path("s/<str:code>/", views.seat_page, name="supporters_seat"),
    path("s/r/<str:reference>/", views.status_page, name="supporters_status"),
    path("supporters/sms/<slug:ground_code>/", sms.inbound, name="supporters_sms"),
    # The control room's.
    path(
        "fixtures/<int:fixture_id>/supporters/panel/",
        triage_views.control_room_panel,
        name="supporters_panel",
    ),
    path(
        "fixtures/<int:fixture_id>/supporters/items/<int:item_id>/<str:action>/",
        triage_views.item_action,
        name="supporters_item_action",
    ),
    path(
        "fixtures/<int:fixture_id>/supporters/reports/<int:report_id>/contact/",
        triage_views.report_contact,
        name="supporters_contact",
    ),
    path(
        "fixtures/<int:fixture_id>/supporters/reports/<int:report_id>/photo/",
        triage_views.report_photo,
        name="supporters_photo",
    ),
    path(
        "grounds/<slug:ground_code>/seat-codes/<str:block_code>.pdf",
        triage_views.seat_sheet,
        name="supporters_seat_sheet",
    ),
]
