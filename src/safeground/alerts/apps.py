from django.apps import AppConfig


class AlertsConfig(AppConfig):
    name = "safeground.alerts"
    verbose_name = "Push alerts to stewards' phones"

    def ready(self) -> None:
        # The log never imports alerts: alerts hears of broadcasts, tasks and warnings through
        # the log's registration point, and adds its panels to the log's pages the same way.
        from safeground.decisions import hooks as decisions_hooks
        from safeground.incidents import hooks, panels

        from .services import alert_broadcast, alert_major_incident, alert_task, alert_warning
        from .views import control_room_alarm_for, control_room_panel_for, steward_panel_for

        hooks.broadcast_sent.register(alert_broadcast)
        hooks.task_given.register(alert_task)
        hooks.warning_written.register(alert_warning)
        # A major incident declared (or its report corrected): to the commanders' phones.
        decisions_hooks.methane_reported.register(alert_major_incident)
        panels.steward_panels.register(steward_panel_for)
        panels.control_room_panels.register(control_room_panel_for)
        panels.control_room_panels.register(control_room_alarm_for)
