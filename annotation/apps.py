from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from annotation.receivers import on_scheme_approved
        from rubrics.signals import scheme_approved

        scheme_approved.connect(on_scheme_approved, dispatch_uid="annotation.items_repin")
