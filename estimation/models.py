"""What Proofmark estimates about its labels and keeps: the campaign's rater-model fit (each
label's confidence stays on adjudication's FinalLabel).

The table kept the name it had in the adjudication app (`db_table`), where the model lived first.
"""

from django.db import models


class RaterModelFit(models.Model):
    """The campaign's last Dawid-Skene fit over experts and automatic graders
    (adjudication.estimators.dawid_skene; fitted by estimation.services.confidence). `raters`:
    one entry per rater, {key, name, kind, judgements, error_rate, confusion}, confusion[true]
    [said] = P(said | true) over `classes`, the campaign's scale values."""

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
    fitted_at = models.DateTimeField()

    class Meta:
        db_table = "adjudication_ratermodelfit"

    def __str__(self) -> str:
        return f"rater model of campaign {self.campaign_id} ({self.fitted_at:%Y-%m-%d %H:%M})"
