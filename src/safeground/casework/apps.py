from django.apps import AppConfig


class CaseworkConfig(AppConfig):
    name = "safeground.casework"
    label = "casework"
    verbose_name = "Identify and sanction: cases, evidence, who was there"

    def ready(self) -> None:
        # The register shows the case and log entries a ban's grounds rest on (bans.hooks).
        from safeground.bans import hooks

        from .selectors import ban_grounds_sources

        hooks.grounds_sources.register(ban_grounds_sources)
