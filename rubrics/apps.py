from django.apps import AppConfig


def _generation_fail(pk: int, reason: str) -> None:
    # the generation module is imported when a task fails, not at every start-up
    from rubrics.generation import generation_task_fail

    generation_task_fail(task_id=pk, reason=reason)


class RubricsConfig(AppConfig):
    name = "rubrics"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.db.models.signals import post_migrate

        from jobs.kinds import JobKind, job_kind_register
        from jobs.models import JobStatus
        from problems.signals import corpus_imported
        from rubrics.receivers import on_corpus_imported, on_migrated

        job_kind_register(
            JobKind(
                "scheme_generation",
                "rubrics.GenerationTask",
                "rubrics.tasks.generate_scheme",
                (JobStatus.PENDING, JobStatus.RETRYING),
                fail=_generation_fail,
            )
        )

        corpus_imported.connect(on_corpus_imported, dispatch_uid="rubrics.schemes_import")
        post_migrate.connect(on_migrated, sender=self, dispatch_uid="rubrics.settings_endpoint")
