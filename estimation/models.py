"""What Proofmark estimates about its labels and keeps: the campaign's rater-model fit (each
label's confidence stays on adjudication's FinalLabel).

The table kept the name it had in the adjudication app (`db_table`), where the model lived first.
"""

from django.db import models
from django.utils import timezone

from jobs.models import JobLiveness, JobStatus


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


class RaterModelRefit(JobLiveness):
    """One background refit of a campaign's rater model (estimation.services.refit), queued by
    the first change of a label since the last refit was queued; the changes that come while it
    waits add to `changes` and share its fit (debounced: one fit per window). The fit itself is
    written in one transaction (`rater_model_store`), so a run that dies leaves the previous fit
    whole, and the jobs sweep runs the refit again."""

    campaign = models.ForeignKey(
        "annotation.Campaign", on_delete=models.CASCADE, related_name="rater_model_refits"
    )
    status = models.CharField(max_length=12, choices=JobStatus.choices, default=JobStatus.PENDING)
    changes = models.PositiveIntegerField(
        default=1, help_text="Changes of labels this refit takes in (grades, labels, imports)."
    )
    reason = models.CharField(max_length=40, blank=True, help_text="What queued it first.")
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_change_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["campaign", "status"], name="refit_campaign_status")]

    def __str__(self) -> str:
        return f"rater model refit {self.pk} of campaign {self.campaign_id} ({self.status})"
