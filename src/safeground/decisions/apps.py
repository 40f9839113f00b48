from django.apps import AppConfig


class DecisionsConfig(AppConfig):
    name = "safeground.decisions"
    verbose_name = "Decision log and radio fallback"

    def ready(self) -> None:
        # The control room and the steward's phone are the log's pages: the decision log's
        # reminders and the radio-down banner reach them through the log's registration point.
        from safeground.entry import hooks as entry_hooks
        from safeground.incidents import panels

        from .closure_views import stands_alarm_for, stands_panel_for
        from .gate_warnings import gate_warning_log
        from .views import control_room_banner_for, steward_banner_for

        panels.control_room_banners.register(control_room_banner_for)
        panels.steward_banners.register(steward_banner_for)
        # A gate warning into the log: this app sits above entry and the log, and decides what a
        # gate warning calls for (gate_warnings.py).
        entry_hooks.gate_warned.register(gate_warning_log)
        # Closing a stand: the stands and their evacuation pages, and the alarm while one is shut.
        panels.control_room_panels.register(stands_panel_for)
        panels.control_room_panels.register(stands_alarm_for)
