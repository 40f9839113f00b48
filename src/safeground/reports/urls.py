from django.urls import path, re_path

from . import views

urlpatterns = [
    path("fixtures/<int:fixture_id>/report/", views.match_report, name="match_report"),
    path("fixtures/<int:fixture_id>/report.pdf", views.match_report_pdf, name="match_report_pdf"),
    re_path(
        r"^fixtures/(?P<fixture_id>[0-9]+)/export/(?P<what>log|scans|forged)\.(?P<fmt>csv|json)$",
        views.match_export,
        name="match_export",
    ),
    path("grounds/<slug:code>/season/", views.season, name="season"),
    path("grounds/<slug:code>/season.pdf", views.season_pdf, name="season_pdf"),
    re_path(
        r"^grounds/(?P<code>[-\w]+)/export/(?P<what>bans|season)\.(?P<fmt>csv|json)$",
        views.ground_export,
        name="ground_export",
    ),
]
