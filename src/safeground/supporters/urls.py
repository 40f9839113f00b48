from django.urls import path

from . import sheet_views, sms, triage_views, views

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
    # The seats' labels to print: a block's, the ground page's panel, the whole ground's.
    path(
        "grounds/<slug:ground_code>/seat-codes/<str:block_code>.pdf",
        sheet_views.seat_sheet,
        name="supporters_seat_sheet",
    ),
    path(
        "grounds/<slug:ground_code>/seat-codes/",
        sheet_views.seat_labels,
        name="supporters_seat_labels",
    ),
    path(
        "grounds/<slug:ground_code>/seat-codes/all/<int:job_id>.zip",
        sheet_views.seat_labels_download,
        name="supporters_seat_labels_download",
    ),
]
