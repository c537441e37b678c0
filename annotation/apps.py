from django.apps import AppConfig


def _proofs_held_blind(user):
    """core.visibility's question, answered by the selector (imported on the first ask)."""
    from annotation.selectors import proofs_held_blind

    return proofs_held_blind(user)


class AnnotationConfig(AppConfig):
    name = "annotation"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from annotation.receivers import on_scheme_approved
        from core.visibility import blind_proofs_register
        from rubrics.signals import scheme_approved

        scheme_approved.connect(on_scheme_approved, dispatch_uid="annotation.items_repin")
        blind_proofs_register(_proofs_held_blind)
