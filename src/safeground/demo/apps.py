from django.apps import AppConfig


class DemoConfig(AppConfig):
    name = "safeground.demo"
    verbose_name = "Demo ground and season"
