from django.urls import path

from . import ticket_pages, views

urlpatterns = [
    path("entry/scanner/", views.scanner_page, name="entry_scanner"),
    path("entry/scanner/sw.js", views.scanner_service_worker, name="entry_scanner_sw"),
    path(
        "fixtures/<int:fixture_id>/tickets/", ticket_pages.fixture_tickets, name="fixture_tickets"
    ),
]
