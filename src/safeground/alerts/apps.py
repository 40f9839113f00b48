from django.apps import AppConfig


class AlertsConfig(AppConfig):
    name = "safeground.alerts"
    verbose_name = "Push alerts to stewards' phones"

    def ready(self) -> None:
        # The log never imports alerts: alerts hears of broadcasts, tasks and warnings through
        # the log's registration point, and adds its panels to the log's pages the same way.
        from safeground.incidents import hooks, panels

        from .services import alert_broadcast, alert_task, alert_warning
        from .views import control_room_alarm_for, control_room_panel_for, steward_panel_for

        hooks.on_broadcast_sent(alert_broadcast)
        hooks.on_task_given(alert_task)
        hooks.on_warning_written(alert_warning)
        panels.register_steward_panel(steward_panel_for)
        panels.register_control_room_panel(control_room_panel_for)
        panels.register_control_room_panel(control_room_alarm_for)
