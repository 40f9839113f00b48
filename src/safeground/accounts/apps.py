from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "safeground.accounts"
    verbose_name = "Organisations and people"
