from django.apps import AppConfig


# the service is imported when a job fails, not at every start-up
def _refit_fail(pk: int, reason: str) -> None:
    from estimation.services.refit import rater_model_refit_fail

    rater_model_refit_fail(refit_id=pk, reason=reason)


class EstimationConfig(AppConfig):
    name = "estimation"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from adjudication.rater_model import (
            rater_model_freshness_register,
            rater_model_summary_register,
        )
        from adjudication.signals import label_changed, proof_labelled_by_loop
        from annotation.signals import items_added, judgement_submitted
        from estimation import receivers
        from graders.signals import grader_evaluated
        from jobs.kinds import JobKind, job_kind_register
        from jobs.models import JobStatus
        from problems.signals import corpus_imported

        job_kind_register(
            JobKind(
                "rater_model_refit",
                "estimation.RaterModelRefit",
                "estimation.rater_model_refit",
                (JobStatus.PENDING, JobStatus.RETRYING),
                fail=_refit_fail,
            )
        )
        rater_model_summary_register(receivers.rater_model_summary)
        rater_model_freshness_register(receivers.rater_model_freshness)
        items_added.connect(receivers.on_items_added, dispatch_uid="estimation.items_added")
        proof_labelled_by_loop.connect(
            receivers.on_proof_labelled_by_loop, dispatch_uid="estimation.proof_labelled_by_loop"
        )
        grader_evaluated.connect(
            receivers.on_grader_evaluated, dispatch_uid="estimation.grader_evaluated"
        )
        judgement_submitted.connect(
            receivers.on_judgement_submitted, dispatch_uid="estimation.judgement_submitted"
        )
        label_changed.connect(receivers.on_label_changed, dispatch_uid="estimation.label_changed")
        corpus_imported.connect(
            receivers.on_corpus_imported, dispatch_uid="estimation.corpus_imported"
        )
