from django.apps import AppConfig


class BackupsConfig(AppConfig):
    name = "safeground.backups"
    verbose_name = "Backup and restore"
