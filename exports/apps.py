from django.apps import AppConfig


# the service is imported when a job fails, not at every start-up
def _export_fail(pk: int, reason: str) -> None:
    from exports.services.datasets import export_fail

    export_fail(job_id=pk, reason=reason)


class ExportsConfig(AppConfig):
    name = "exports"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from core.files import stored_folder_delete
        from jobs.kinds import JobKind, job_kind_register
        from jobs.models import JobStatus

        # a re-run starts from nothing: whatever the dead run stored goes (each run writes in a
        # scratch folder of its own and stores its files only when they are complete)
        job_kind_register(
            JobKind(
                "export",
                "exports.ExportJob",
                "exports.export_run",
                (JobStatus.PENDING,),
                fail=_export_fail,
                reset=lambda pk: stored_folder_delete(f"exports/{pk}"),
            )
        )
