from django.urls import path

from . import ticket_pages, views

urlpatterns = [
    path("entry/scanner/", views.scanner_page, name="entry_scanner"),
    path("entry/scanner/sw.js", views.scanner_service_worker, name="entry_scanner_sw"),
    # The ban officer's review of flagged tickets, beside the register's pages.
    path("register/flags/", views.flags, name="flags"),
    path("register/flags/<int:flag_id>/", views.flag, name="flag"),
    path("register/flags/<int:flag_id>/decide/", views.flag_decide, name="flag_decide"),
    path(
        "fixtures/<int:fixture_id>/tickets/", ticket_pages.fixture_tickets, name="fixture_tickets"
    ),
]
