from django.apps import AppConfig


class VenuesConfig(AppConfig):
    name = "safeground.venues"
    verbose_name = "Grounds and seating plans"
