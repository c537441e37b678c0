"""Calibration rounds: campaigns (Campaign.is_calibration) of copies of gold items. Each copy
keeps the item whose final label is its gold answer; the round's grades are compared with that
label and never become labels themselves (adjudication skips calibration rounds).

The gate: a campaign's requirement of a passed round and the experts who met it. Assignment
(annotation, below) asks the gate through the check this app registers
(`annotation.calibration_gate`); the tables kept their rows when they moved here from annotation
(migrations calibration 0003 and annotation 0010)."""

from decimal import Decimal

from django.conf import settings
from django.db import models
from django.db.models import Q


class CalibrationRequirement(models.Model):
    """Experts receive items of `campaign` only once they graded at least `min_items` gold
    items of the calibration round `round` with a mean absolute error of at most `max_mae`."""

    campaign = models.OneToOneField(
        "annotation.Campaign", on_delete=models.CASCADE, related_name="calibration_requirement"
    )
    round = models.ForeignKey(
        "annotation.Campaign", on_delete=models.PROTECT, related_name="required_by"
    )
    max_mae = models.DecimalField(
        max_digits=4, decimal_places=2, default=Decimal("1"), help_text="Largest mean |error|."
    )
    min_items = models.PositiveSmallIntegerField(default=5)
    set_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(max_mae__gte=0), name="calib_req_mae_positive"),
            models.CheckConstraint(condition=Q(min_items__gte=1), name="calib_req_min_items_1"),
            models.CheckConstraint(
                condition=~Q(round=models.F("campaign")), name="calib_req_not_itself"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.campaign_id} requires round {self.round_id}"

    def describe(self) -> str:
        return (
            f"a mean absolute error of at most {self.max_mae.normalize():f} "
            f"on at least {self.min_items} gold item(s)"
        )


class CalibrationPass(models.Model):
    """An expert who met a requirement, with the figures that met it (kept when later grades
    of the round move them: a pass is not taken back)."""

    requirement = models.ForeignKey(
        CalibrationRequirement, on_delete=models.CASCADE, related_name="passes"
    )
    expert = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="calibration_passes"
    )
    items = models.PositiveIntegerField()
    mae = models.DecimalField(max_digits=5, decimal_places=3)
    passed_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["requirement_id", "passed_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["requirement", "expert"], name="calib_pass_unique")
        ]

    def __str__(self) -> str:
        return f"{self.expert_id} passed requirement {self.requirement_id}"


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
        CalibrationRequirement, on_delete=models.CASCADE, related_name="retakes"
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
