"""Receivers of annotation's signals (connected in CalibrationConfig.ready); each calls one
service, imported when the signal comes (not at every start-up)."""


def on_expert_added(sender, *, campaign_id: int, user_id: int, **kwargs) -> None:
    """A new expert of a campaign that requires a calibration round may grade that round."""
    from calibration.services import calibration_rounds_join

    calibration_rounds_join(campaign_id=campaign_id, user_id=user_id)


def gate_check(*, campaign, expert) -> None:
    """calibration.services.calibration_gate_check, registered with annotation's gate and
    imported on the first check."""
    from calibration.services import calibration_gate_check

    calibration_gate_check(campaign=campaign, expert=expert)
