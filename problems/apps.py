from django.apps import AppConfig


def _import_fail(pk: int, reason: str) -> None:
    # the services are imported when a job fails, not at every start-up
    from problems.services import import_job_fail

    import_job_fail(job_id=pk, message=reason)


class ProblemsConfig(AppConfig):
    name = "problems"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from jobs.kinds import JobKind, job_kind_register
        from jobs.models import JobStatus

        job_kind_register(
            JobKind(
                "import",
                "problems.ImportJob",
                "problems.tasks.import_run",
                (JobStatus.PENDING,),
                fail=_import_fail,
            )
        )
