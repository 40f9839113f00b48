from django.apps import AppConfig


class LiveConfig(AppConfig):
    name = "safeground.live"
    verbose_name = "Live picture"
