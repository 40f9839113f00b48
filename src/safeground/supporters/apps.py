from django.apps import AppConfig


class SupportersConfig(AppConfig):
    name = "safeground.supporters"
    verbose_name = "Supporters' reports from their seats and the text line"

    def ready(self) -> None:
        # The queue shows under the control room's map (the log's page) through the log's
        # registration point: the log never imports this app.
        from safeground.incidents import hooks, panels
        from safeground.venues.hooks import ground_panels

        from .services import reporters_tell_dealt_with
        from .sheet_views import ground_panel_for
        from .triage_views import control_room_panel_for

        panels.control_room_map_panels.register(control_room_panel_for)
        # The text line's reporters hear when their report's incident is dealt with.
        hooks.incident_dealt_with.register(reporters_tell_dealt_with)
        # The seat labels to print, on the ground's page.
        ground_panels.register(ground_panel_for)
