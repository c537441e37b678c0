"""Receivers of annotation's signals (connected in CalibrationConfig.ready); each calls one
service."""

from calibration.services import calibration_gate_refresh


def on_calibration_gate_blocked(sender, *, campaign_id: int, expert_id: int, **kwargs) -> None:
    """ "Next" found no pass on record: record the one the expert may have earned since (on
    their round: the requirement's, or a new one given to them)."""
    calibration_gate_refresh(campaign_id=campaign_id, expert_id=expert_id)
