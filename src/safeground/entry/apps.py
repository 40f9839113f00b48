from django.apps import AppConfig


class EntryConfig(AppConfig):
    name = "safeground.entry"
    verbose_name = "Tickets and entry"

    def ready(self) -> None:
        from safeground.matches.risk import register_history

        from .risk_history import banned_denials

        register_history(banned_denials)
