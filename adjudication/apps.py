from django.apps import AppConfig


class AdjudicationConfig(AppConfig):
    name = "adjudication"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from adjudication import receivers
        from annotation.signals import item_judged
        from problems.signals import corpus_imported

        item_judged.connect(receivers.on_item_judged, dispatch_uid="adjudication.item_judged")
        corpus_imported.connect(
            receivers.on_corpus_imported, dispatch_uid="adjudication.corpus_imported"
        )
