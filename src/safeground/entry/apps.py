from django.apps import AppConfig


class EntryConfig(AppConfig):
    name = "safeground.entry"
    verbose_name = "Tickets and entry"

    def ready(self) -> None:
        # The register tells the gates of its bans through bans.hooks (bans never imports entry).
        from safeground.bans import hooks

        from . import flagging, selectors, services

        hooks.on_ban_in_force(flagging.ban_in_force)
        hooks.on_ban_revoked(services.flags_clear_revoked)
        hooks.on_flags_awaiting(selectors.flags_awaiting)
        # Risk assessment (matches) reads the history through a registered source.
        from safeground.matches.risk import register_history

        from .risk_history import banned_denials

        register_history(banned_denials)
        # A key revoked in this process is refused here at once, not after the cache's time.
        from safeground.accounts.services import on_device_revoked

        from .runtime.lookups import device_forget

        on_device_revoked(device_forget)
