from django.apps import AppConfig


class IncidentsConfig(AppConfig):
    name = "safeground.incidents"
    verbose_name = "Control-room log"

    def ready(self) -> None:
        from safeground.matches.risk import register_history

        from .risk_history import log_history

        register_history(log_history)
