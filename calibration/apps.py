from django.apps import AppConfig


class CalibrationConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "calibration"
    verbose_name = "Calibration with gold feedback"

    def ready(self) -> None:
        from annotation.signals import judgement_submitted
        from calibration.receivers import on_judgement_submitted

        judgement_submitted.connect(on_judgement_submitted, dispatch_uid="calibration-passes")
