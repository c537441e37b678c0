"""What the assignment gate reads: a campaign's calibration requirement and the experts who
met it. The calibration app computes errors against gold (labels live above annotation) and
records passes here through annotation.services.calibration; assignment only reads them."""

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
        app_label = "annotation"
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
        app_label = "annotation"
        ordering = ["requirement_id", "passed_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["requirement", "expert"], name="calib_pass_unique")
        ]

    def __str__(self) -> str:
        return f"{self.expert_id} passed requirement {self.requirement_id}"
