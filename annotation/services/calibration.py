"""The calibration gate: a campaign may require its experts to pass a calibration round first.

The figures (error against gold) are computed by the calibration app, above adjudication where
gold labels live; it records passes through `calibration_pass_record`, when a requirement is set
and when the gate, finding no pass on record, says so (`annotation.signals.calibration_gate_blocked`).
Assignment reads them in one query (`calibration_gate_check`) before it leases new work.
"""

from __future__ import annotations

from decimal import Decimal

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.urls import reverse

from annotation.models import (
    CalibrationPass,
    CalibrationRequirement,
    Campaign,
    CampaignMember,
    MemberRole,
)
from annotation.signals import calibration_gate_blocked


class CalibrationRequired(Exception):
    """The expert has not passed the campaign's calibration round yet; the message says so and
    where to see their figures and what to do (`standing_url`: the calibration app's page of
    where they stand, which knows the round they are checked on and what is left in it)."""

    def __init__(self, requirement: CalibrationRequirement):
        self.requirement = requirement
        self.standing_url = reverse("calibration:standing", args=[requirement.campaign.slug])
        super().__init__(
            f"{requirement.campaign.name} needs a passed calibration round before it gives you "
            f"items: {requirement.describe()}. Where you stand, the round to grade and what to "
            f"do next: {self.standing_url}"
        )


class CalibrationRequirementError(ValueError):
    """A requirement that does not make sense; the message names the field."""


def _blocking(campaign: Campaign, expert: AbstractBaseUser) -> CalibrationRequirement | None:
    return (
        CalibrationRequirement.objects.filter(campaign_id=campaign.pk)
        .exclude(passes__expert_id=expert.pk)
        .select_related("round", "campaign")
        .first()
    )


def calibration_gate_check(*, campaign: Campaign, expert: AbstractBaseUser) -> None:
    """CalibrationRequired when the campaign requires a calibration round the expert has not
    passed (one query once passed; assignment calls it only when
    `campaign.calibration_required`). Without a pass on record, `calibration_gate_blocked`
    lets the calibration app record one the expert earned since, and the check runs again."""
    blocking = _blocking(campaign, expert)
    if blocking is None:
        return
    calibration_gate_blocked.send(
        sender=CalibrationRequirement,
        campaign_id=campaign.pk,
        round_id=blocking.round_id,
        expert_id=expert.pk,
    )
    blocking = _blocking(campaign, expert)
    if blocking is not None:
        raise CalibrationRequired(blocking)


@transaction.atomic
def calibration_requirement_save(
    *,
    campaign: Campaign,
    round: Campaign,
    max_mae: Decimal,
    min_items: int,
    set_by: AbstractBaseUser | None,
) -> CalibrationRequirement:
    """Sets (or changes) the campaign's requirement; the passes of an earlier threshold are
    dropped (the caller records them again against the new one), and the campaign's experts
    become experts of the round."""
    if campaign.is_calibration:
        raise CalibrationRequirementError("campaign: a calibration round cannot require another")
    if not round.is_calibration:
        raise CalibrationRequirementError(f"round: {round.slug!r} is not a calibration round")
    if round.scale != campaign.scale:
        raise CalibrationRequirementError(
            f"round: its scale ({round.scale}) differs from the campaign's ({campaign.scale})"
        )
    if max_mae is None or Decimal(max_mae) < 0:
        raise CalibrationRequirementError("max_mae: give a mean absolute error of 0 or more")
    if min_items is None or int(min_items) < 1:
        raise CalibrationRequirementError("min_items: give at least 1 gold item")
    requirement = (
        CalibrationRequirement.objects.select_for_update().filter(campaign=campaign).first()
    )
    if requirement is None:
        requirement = CalibrationRequirement(campaign=campaign)
    else:
        requirement.passes.all().delete()
    requirement.round = round
    requirement.max_mae = Decimal(max_mae)
    requirement.min_items = int(min_items)
    requirement.set_by = set_by
    requirement.save()
    if not campaign.calibration_required:
        Campaign.objects.filter(pk=campaign.pk).update(calibration_required=True)
        campaign.calibration_required = True
    experts = CampaignMember.objects.filter(campaign=campaign, role=MemberRole.EXPERT)
    for user_id in experts.values_list("user_id", flat=True):
        CampaignMember.objects.get_or_create(
            campaign=round, user_id=user_id, role=MemberRole.EXPERT
        )
    return requirement


@transaction.atomic
def calibration_requirement_remove(*, campaign: Campaign) -> None:
    CalibrationRequirement.objects.filter(campaign=campaign).delete()
    Campaign.objects.filter(pk=campaign.pk).update(calibration_required=False)
    campaign.calibration_required = False


@transaction.atomic
def calibration_pass_record(
    *, requirement: CalibrationRequirement, expert_id: int, items: int, mae: float
) -> CalibrationPass:
    """Records that the expert met the requirement (once: a later, worse figure keeps it)."""
    passed, _ = CalibrationPass.objects.get_or_create(
        requirement=requirement,
        expert_id=expert_id,
        defaults={"items": items, "mae": Decimal(str(round(mae, 3)))},
    )
    return passed
