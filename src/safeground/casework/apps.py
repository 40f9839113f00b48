from django.apps import AppConfig


class CaseworkConfig(AppConfig):
    name = "safeground.casework"
    label = "casework"
    verbose_name = "Identify and sanction: cases, evidence, who was there"

    def ready(self) -> None:
        # The register shows the case and log entries a ban's grounds rest on (bans.hooks).
        from safeground.bans import hooks

        from .selectors import ban_grounds_sources, legal_holds, subject_access_cases
        from .services import evidence_retention_apply

        hooks.on_grounds_sources(ban_grounds_sources)
        # Retention leaves what an open case names; a subject-access export lists the cases.
        hooks.on_legal_holds(legal_holds)
        hooks.on_subject_access(subject_access_cases)
        # The daily retention deletes the evidence files no longer needed (ADR 0011).
        hooks.on_retention(evidence_retention_apply)
