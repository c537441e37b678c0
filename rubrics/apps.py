from django.apps import AppConfig


class RubricsConfig(AppConfig):
    name = "rubrics"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.db.models.signals import post_migrate

        from problems.signals import corpus_imported
        from rubrics.receivers import on_corpus_imported, on_migrated

        corpus_imported.connect(on_corpus_imported, dispatch_uid="rubrics.schemes_import")
        post_migrate.connect(on_migrated, sender=self, dispatch_uid="rubrics.settings_endpoint")
