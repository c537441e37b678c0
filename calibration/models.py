"""Calibration rounds: campaigns (Campaign.is_calibration) of copies of gold items. Each copy
keeps the item whose final label is its gold answer; the round's grades are compared with that
label and never become labels themselves (adjudication skips calibration rounds)."""

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
