from django.apps import AppConfig


class CaseworkConfig(AppConfig):
    name = "safeground.casework"
    label = "casework"
    verbose_name = "Identify and sanction: cases, evidence, who was there"
