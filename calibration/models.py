"""Calibration rounds: campaigns (Campaign.is_calibration) of copies of gold items. Each copy
keeps the item whose final label is its gold answer; the round's grades are compared with that
label and never become labels themselves (adjudication skips calibration rounds)."""

from django.conf import settings
from django.db import models


class CalibrationItem(models.Model):
    item = models.OneToOneField(
        "annotation.Item", on_delete=models.CASCADE, related_name="calibration"
    )
    source = models.ForeignKey(
        "annotation.Item",
        on_delete=models.PROTECT,
        related_name="calibration_copies",
        help_text="The gold item: its final label is the answer the expert is checked against.",
    )

    class Meta:
        ordering = ["item_id"]

    def __str__(self) -> str:
        return f"calibration item {self.item_id} (gold from item {self.source_id})"


class CalibrationRetake(models.Model):
    """A new round for one expert who could not meet a campaign's requirement on its round (no
    gold item left for them there): while the requirement still names the round it `replaces`,
    that expert's figures are read on `round` instead. Given by an admin from the requirement
    page (calibration.services.calibration_retake_create)."""

    requirement = models.ForeignKey(
        "annotation.CalibrationRequirement", on_delete=models.CASCADE, related_name="retakes"
    )
    expert = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="calibration_retakes"
    )
    round = models.ForeignKey(
        "annotation.Campaign", on_delete=models.CASCADE, related_name="retake_of"
    )
    replaces = models.ForeignKey(
        "annotation.Campaign",
        on_delete=models.CASCADE,
        related_name="+",
        help_text="The requirement's round when the retake was given; a changed round ends it.",
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["requirement", "expert"], name="calib_retake_unique")
        ]

    def __str__(self) -> str:
        return f"retake {self.round_id} for expert {self.expert_id}"
