from django.apps import AppConfig


class ProblemsConfig(AppConfig):
    name = "problems"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from jobs.kinds import JobKind, job_kind_register
        from problems.services import import_job_fail

        job_kind_register(
            JobKind(
                "import",
                "problems.ImportJob",
                "problems.tasks.import_run",
                ("pending",),
                fail=lambda pk, reason: import_job_fail(job_id=pk, message=reason),
            )
        )
