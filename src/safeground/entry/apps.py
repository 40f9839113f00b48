from django.apps import AppConfig


class EntryConfig(AppConfig):
    name = "safeground.entry"
    verbose_name = "Tickets and entry"

    def ready(self) -> None:
        # The register tells the gates of its bans through bans.hooks (bans never imports entry).
        from safeground.bans import hooks

        from . import flagging, selectors, services

        hooks.ban_in_force.register(flagging.ban_in_force)
        hooks.ban_revoked.register(services.flags_clear_revoked)
        hooks.flags_awaiting.register(selectors.flags_awaiting)
        # Risk assessment (matches) reads the history through a registered source.
        from safeground.matches.risk import history_sources

        from .risk_history import banned_denials

        history_sources.register(banned_denials)
        # A key revoked in this process is refused here at once, not after the cache's time.
        from safeground.accounts.services import device_revoked

        from .runtime.lookups import device_forget

        device_revoked.register(device_forget)
        # A gate policy names scan reasons by the reason table's codes (matches.policy checks).
        from safeground.matches import policy

        from .rules import CODES

        policy.scan_reasons.update(CODES)
