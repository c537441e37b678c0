"""Receivers of annotation's signals (connected in CalibrationConfig.ready); each calls one
service."""

from calibration.services import calibration_rounds_join


def on_expert_added(sender, *, campaign_id: int, user_id: int, **kwargs) -> None:
    """A new expert of a campaign that requires a calibration round may grade that round."""
    calibration_rounds_join(campaign_id=campaign_id, user_id=user_id)
