from django.apps import AppConfig


class IncidentsConfig(AppConfig):
    name = "safeground.incidents"
    verbose_name = "Control-room log"
