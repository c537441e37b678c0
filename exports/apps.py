from django.apps import AppConfig


class ExportsConfig(AppConfig):
    name = "exports"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from adjudication.signals import proof_labelled_by_loop
        from annotation.signals import items_added
        from exports import opinions, receivers

        opinions.connect()
        items_added.connect(receivers.on_items_added, dispatch_uid="exports.items_added")
        proof_labelled_by_loop.connect(
            receivers.on_proof_labelled_by_loop, dispatch_uid="exports.proof_labelled_by_loop"
        )
