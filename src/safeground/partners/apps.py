from django.apps import AppConfig


class PartnersConfig(AppConfig):
    name = "safeground.partners"
    verbose_name = "What partner agencies are told"

    def ready(self) -> None:
        # The log and the decision log never import partners: it hears of broadcasts, warnings,
        # decisions and M/ETHANE reports through their hooks, after each commits, and adds its
        # panel to the fixture's page the same way.
        from safeground.decisions import hooks as decisions_hooks
        from safeground.incidents import hooks as incidents_hooks
        from safeground.matches.hooks import fixture_panels

        from . import services, views

        incidents_hooks.broadcast_sent.register(services.broadcast_told)
        incidents_hooks.warning_written.register(services.warning_told)
        decisions_hooks.decision_recorded.register(services.kickoff_told)
        decisions_hooks.methane_reported.register(services.methane_told)
        fixture_panels.register(views.fixture_panel_for)
