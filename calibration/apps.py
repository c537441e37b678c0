from django.apps import AppConfig


class CalibrationConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "calibration"
    verbose_name = "Calibration with gold feedback"

    def ready(self) -> None:
        from annotation.signals import calibration_gate_blocked
        from calibration.receivers import on_calibration_gate_blocked

        calibration_gate_blocked.connect(
            on_calibration_gate_blocked, dispatch_uid="calibration-passes"
        )
