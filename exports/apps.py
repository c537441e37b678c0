from django.apps import AppConfig


# the services are imported when a job fails, not at every start-up
def _evaluation_fail(pk: int, reason: str) -> None:
    from exports.services.evaluations import evaluation_fail

    evaluation_fail(evaluation_id=pk, reason=reason)


def _export_fail(pk: int, reason: str) -> None:
    from exports.services.datasets import export_fail

    export_fail(job_id=pk, reason=reason)


class ExportsConfig(AppConfig):
    name = "exports"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from adjudication.signals import proof_labelled_by_loop
        from annotation.signals import items_added
        from config.storage import stored_folder_delete
        from exports import opinions, receivers
        from jobs.kinds import JobKind, job_kind_register
        from jobs.models import JobStatus

        job_kind_register(
            JobKind(
                "grader_evaluation",
                "exports.GraderEvaluation",
                "exports.evaluation_run",
                (JobStatus.PENDING,),
                fail=_evaluation_fail,
            )
        )
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

        opinions.connect()
        items_added.connect(receivers.on_items_added, dispatch_uid="exports.items_added")
        proof_labelled_by_loop.connect(
            receivers.on_proof_labelled_by_loop, dispatch_uid="exports.proof_labelled_by_loop"
        )
