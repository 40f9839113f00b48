from django.apps import AppConfig


class EntryConfig(AppConfig):
    name = "safeground.entry"
    verbose_name = "Tickets and entry"
