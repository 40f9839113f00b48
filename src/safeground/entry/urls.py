from django.urls import path

from . import views

urlpatterns = [
    path("entry/scanner/", views.scanner_page, name="entry_scanner"),
    path("entry/scanner/sw.js", views.scanner_service_worker, name="entry_scanner_sw"),
]
