from django.apps import AppConfig


class BansConfig(AppConfig):
    name = "safeground.bans"
    verbose_name = "Banned-supporter register"
