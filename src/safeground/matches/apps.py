from django.apps import AppConfig


class MatchesConfig(AppConfig):
    name = "safeground.matches"
    verbose_name = "Clubs and fixtures"
