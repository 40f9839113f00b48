from django.apps import AppConfig


class PrivacyConfig(AppConfig):
    name = "safeground.privacy"
    verbose_name = "Personal data: retention, legal holds and subject access"
