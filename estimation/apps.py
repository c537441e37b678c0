from django.apps import AppConfig


class EstimationConfig(AppConfig):
    name = "estimation"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from adjudication.rater_model import rater_model_summary_register
        from adjudication.signals import proof_labelled_by_loop
        from annotation.signals import items_added
        from estimation import receivers
        from graders.signals import grader_evaluated

        rater_model_summary_register(receivers.rater_model_summary)
        items_added.connect(receivers.on_items_added, dispatch_uid="estimation.items_added")
        proof_labelled_by_loop.connect(
            receivers.on_proof_labelled_by_loop, dispatch_uid="estimation.proof_labelled_by_loop"
        )
        grader_evaluated.connect(
            receivers.on_grader_evaluated, dispatch_uid="estimation.grader_evaluated"
        )
