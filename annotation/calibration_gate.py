"""The calibration gate as assignment sees it: a campaign may require a passed calibration round
before its experts receive new work (`Campaign.calibration_required`). What a pass is (error
against gold labels, which live above annotation) is the calibration app's: it registers the
check from `CalibrationConfig.ready` (`calibration.services.calibration_gate_check`), as job kinds
register themselves; assignment calls `calibration_gate_check` before it leases new work."""

from __future__ import annotations

from collections.abc import Callable

from django.contrib.auth.models import AbstractBaseUser

from annotation.models import Campaign

GateCheck = Callable[..., None]
_checks: list[GateCheck] = []


class CalibrationRequired(Exception):
    """The expert has not passed the campaign's calibration round yet: the message says so and
    what to do, `standing_url` is the page of where they stand (the calibration app's)."""

    def __init__(self, message: str, *, standing_url: str):
        self.standing_url = standing_url
        super().__init__(message)


def calibration_gate_register(check: GateCheck) -> None:
    """Registers the check (keyword arguments campaign and expert; raises CalibrationRequired);
    registering the same one again changes nothing."""
    if check not in _checks:
        _checks.append(check)


def calibration_gate_check(*, campaign: Campaign, expert: AbstractBaseUser) -> None:
    """CalibrationRequired when the campaign requires a calibration round the expert has not
    passed (assignment calls it only when `campaign.calibration_required`)."""
    if not _checks:
        raise LookupError("no calibration gate is registered (is the calibration app installed?)")
    for check in _checks:
        check(campaign=campaign, expert=expert)
