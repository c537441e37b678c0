"""Receivers of annotation's signals (connected in CalibrationConfig.ready); each calls one
service."""

from annotation.models import Campaign, Grade
from calibration.services import calibration_passes_refresh


def on_judgement_submitted(sender, *, grade_id: int, **kwargs) -> None:
    """A submission in a round that some campaign requires may make its expert pass (one query
    for every other submission)."""
    found = (
        Grade.objects.filter(
            pk=grade_id,
            item__campaign__is_calibration=True,
            item__campaign__required_by__isnull=False,
        )
        .values_list("expert_id", "item__campaign_id")
        .first()
    )
    if found is not None:
        expert_id, round_id = found
        calibration_passes_refresh(round=Campaign.objects.get(pk=round_id), expert_id=expert_id)
