from django.apps import AppConfig


class RubricsConfig(AppConfig):
    name = "rubrics"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from problems.signals import corpus_imported
        from rubrics.receivers import on_corpus_imported

        corpus_imported.connect(on_corpus_imported, dispatch_uid="rubrics.schemes_import")
