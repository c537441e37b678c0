"""Receivers of annotation's signals (connected in CalibrationConfig.ready); each calls one
service."""

from annotation.models import Campaign
from calibration.services import calibration_passes_refresh


def on_calibration_gate_blocked(sender, *, round_id: int, expert_id: int, **kwargs) -> None:
    """ "Next" found no pass on record: record the one the expert may have earned since."""
    calibration_passes_refresh(round=Campaign.objects.get(pk=round_id), expert_id=expert_id)
