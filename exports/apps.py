from django.apps import AppConfig


class ExportsConfig(AppConfig):
    name = "exports"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from annotation.signals import items_added
        from exports import receivers

        items_added.connect(receivers.on_items_added, dispatch_uid="exports.items_added")
