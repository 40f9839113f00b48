from django.apps import AppConfig


class IncidentsConfig(AppConfig):
    name = "safeground.incidents"
    verbose_name = "Control-room log"

    def ready(self) -> None:
        # Live sits below the log and never imports it: the log tells live what a reconnecting
        # socket missed and which zones a steward's socket is for.
        from safeground.live import providers

        from .catch_up import live_catch_up
        from .selectors import viewer_zone_ids

        providers.catch_up_sources.register(live_catch_up)
        providers.viewer_zones.register(viewer_zone_ids)
        # Risk assessment (matches) reads the history through a registered source.
        from safeground.matches.risk import history_sources

        from .risk_history import log_history

        history_sources.register(log_history)
