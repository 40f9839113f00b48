from django.apps import AppConfig


class ReportsConfig(AppConfig):
    name = "safeground.reports"
    verbose_name = "Reports and season analytics"
