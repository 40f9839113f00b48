from django.apps import AppConfig


class DeploymentConfig(AppConfig):
    name = "safeground.deployment"
    verbose_name = "Steward deployment and pre-match checks"

    def ready(self) -> None:
        # The steward's phone and the control room are the log's pages; deployment sits above
        # the log and adds its panels to them through the log's registration point.
        from safeground.incidents import panels

        from .views import control_room_panel_for, steward_panel_for

        panels.steward_panels.register(steward_panel_for)
        panels.control_room_panels.register(control_room_panel_for)
