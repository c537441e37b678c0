"""What Proofmark estimates about its labels and keeps: the campaign's rater-model fit (each
label's confidence stays on adjudication's FinalLabel).

The table kept the name it had in the adjudication app (`db_table`), where the model lived first.
"""

from django.db import models


class RaterModelFit(models.Model):
    """The campaign's last rater-model fit over experts and automatic graders (fitted by
    estimation.services.confidence; the models in adjudication.rater_models). `raters`: one
    entry per rater, {key, name, kind, judgements, error_rate, confusion}, confusion[true]
    [said] = P(said | true) over `classes`, the campaign's scale values.

    `model`: the candidate chosen by held-out calibration (`heldout_scores`: each candidate's
    held-out log loss; empty when there was no held-out case); `temperature`: the softening
    applied to the posteriors (1: none). `calibration`: measured at fit time on the held-out
    cases (gold items with their class hidden, one removed judgement of each double-scored
    item): {cases, gold_cases, judgement_cases, enough, ece, ece_low, ece_high, rows: [{low,
    high, n, confidence, accuracy}]}; `enough` false (and no ECE stated) below
    adjudication.rater_models.MIN_CASES cases."""

    campaign = models.OneToOneField(
        "annotation.Campaign", on_delete=models.CASCADE, related_name="rater_model"
    )
    classes = models.JSONField(default=list)
    priors = models.JSONField(default=list)
    raters = models.JSONField(default=list)
    items = models.PositiveIntegerField(default=0)
    gold = models.PositiveIntegerField(default=0)
    judgements = models.PositiveIntegerField(default=0)
    iterations = models.PositiveSmallIntegerField(default=0)
    model = models.CharField(max_length=40, default="dawid-skene")
    heldout_scores = models.JSONField(default=dict)
    temperature = models.FloatField(default=1.0)
    calibration = models.JSONField(default=dict)
    fitted_at = models.DateTimeField()

    class Meta:
        db_table = "adjudication_ratermodelfit"

    def __str__(self) -> str:
        return f"rater model of campaign {self.campaign_id} ({self.fitted_at:%Y-%m-%d %H:%M})"
