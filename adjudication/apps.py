from django.apps import AppConfig


# the services are imported when a job fails, not at every start-up
def _verifier_run_fail(pk: int, reason: str) -> None:
    from adjudication.verification.verifier_runs import verifier_run_fail

    verifier_run_fail(run_id=pk, reason=reason)


def _labelling_fail(pk: int, reason: str) -> None:
    from adjudication.verification.labelling import labelling_outcome_fail

    labelling_outcome_fail(outcome_id=pk, reason=reason)


class AdjudicationConfig(AppConfig):
    name = "adjudication"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from adjudication import receivers
        from annotation.signals import item_judged
        from jobs.kinds import JobKind, job_kind_register
        from jobs.models import JobStatus
        from problems.signals import corpus_imported

        job_kind_register(
            JobKind(
                "verifier_run",
                "adjudication.VerifierRun",
                "adjudication.tasks.verifier_run_job",
                (JobStatus.PENDING,),
                fail=_verifier_run_fail,
            )
        )
        job_kind_register(
            JobKind(
                "labelling",
                "adjudication.LabellingOutcome",
                "adjudication.tasks.labelling_outcome_job",
                (JobStatus.PENDING, JobStatus.RETRYING),
                fail=_labelling_fail,
            )
        )

        item_judged.connect(receivers.on_item_judged, dispatch_uid="adjudication.item_judged")
        corpus_imported.connect(
            receivers.on_corpus_imported, dispatch_uid="adjudication.corpus_imported"
        )
