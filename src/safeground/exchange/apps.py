from django.apps import AppConfig


class ExchangeConfig(AppConfig):
    name = "safeground.exchange"
    verbose_name = "League ban exchange"

    def ready(self) -> None:
        # A club publishes its league-wide bans again when one starts, ends, is appealed or
        # decided (bans.hooks; bans never imports the exchange).
        from safeground.bans import hooks
        from safeground.entry.hooks import tickets_arrived
        from safeground.matches.hooks import fixture_panels

        from . import check_runs, publishing, views

        hooks.ban_changed.register(publishing.ban_changed)
        # The holders of tickets as they are imported are checked, only theirs (entry never
        # imports the exchange); the fixture's page shows its background check's progress.
        tickets_arrived.register(check_runs.tickets_arrived)
        fixture_panels.register(views.fixture_panel_for)
