from django.apps import AppConfig


class ExchangeConfig(AppConfig):
    name = "safeground.exchange"
    verbose_name = "League ban exchange"

    def ready(self) -> None:
        # A club publishes its league-wide bans again when one starts, ends, is appealed or
        # decided (bans.hooks; bans never imports the exchange).
        from safeground.bans import hooks

        from . import publishing

        hooks.ban_changed.register(publishing.ban_changed)
