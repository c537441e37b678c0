from django.apps import AppConfig


class CalibrationConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "calibration"
    verbose_name = "Calibration with gold feedback"

    def ready(self) -> None:
        from annotation.calibration_gate import calibration_gate_register
        from annotation.signals import expert_added
        from calibration.receivers import gate_check, on_expert_added

        calibration_gate_register(gate_check)
        expert_added.connect(on_expert_added, dispatch_uid="calibration-rounds")
