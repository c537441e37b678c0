from django.apps import AppConfig


class ProblemsConfig(AppConfig):
    name = "problems"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from jobs.kinds import JobKind, job_kind_register
        from jobs.models import JobStatus
        from problems.services import import_job_fail

        job_kind_register(
            JobKind(
                "import",
                "problems.ImportJob",
                "problems.tasks.import_run",
                (JobStatus.PENDING,),
                fail=lambda pk, reason: import_job_fail(job_id=pk, message=reason),
            )
        )
