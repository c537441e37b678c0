"""Writes of calibration: rounds made of gold items, the passes of a campaign's requirement."""

from __future__ import annotations

from decimal import Decimal

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils.text import slugify

from annotation.models import (
    CalibrationRequirement,
    Campaign,
    CampaignMember,
    Grade,
    Item,
    MemberRole,
    TaskKind,
)
from annotation.services import campaign_create
from annotation.services.calibration import calibration_pass_record, calibration_requirement_save
from calibration import selectors
from calibration.models import CalibrationItem, CalibrationRetake


class CalibrationError(ValueError):
    """A round or requirement that cannot be made; the message names the field."""


@transaction.atomic
def calibration_round_create(
    *,
    name: str,
    gold_items: list[Item],
    created_by: AbstractBaseUser | None,
    slug: str = "",
    guidelines: str = "",
    experts: list[AbstractBaseUser] = (),
) -> Campaign:
    """A calibration round: a campaign (is_calibration) holding a copy of each gold item, served
    to every expert of the round in turn, each copy pinned to the scheme version its gold grade
    used. Items must have a gold label (adjudication, agreement or import) and share a scale."""
    if not gold_items:
        raise CalibrationError("gold_items: choose at least one gold item")
    ids = sorted({item.pk for item in gold_items})
    eligible = {item.pk: item for item in selectors.gold_candidates().filter(pk__in=ids)}
    missing = [pk for pk in ids if pk not in eligible]
    if missing:
        raise CalibrationError(
            "gold_items: item(s) "
            + ", ".join(map(str, missing))
            + " have no gold label (adjudication, agreement or import) or are not proof grading"
        )
    scales = {item.campaign.scale for item in eligible.values()}
    if len(scales) > 1:
        raise CalibrationError(
            f"gold_items: the items come from campaigns of different scales ({', '.join(sorted(scales))})"
        )
    proofs = [eligible[pk].proof_id for pk in ids]
    if len(set(proofs)) != len(proofs):
        raise CalibrationError("gold_items: two of the items grade the same proof; keep one")
    try:
        round = campaign_create(
            name=name,
            slug=slug,
            created_by=created_by,
            task_kind=TaskKind.PROOF_GRADING,
            scale=scales.pop(),
            double_share=Decimal("0"),
            gold_rate=Decimal("1"),
            guidelines=guidelines,
            is_calibration=True,
        )
    except ValueError as exc:
        raise CalibrationError(str(exc)) from exc
    for pk in ids:
        source = eligible[pk]
        copy = Item.objects.create(
            campaign=round,
            proof_id=source.proof_id,
            scheme_id=source.scheme_id,
            required_judgements=1,
            is_gold=True,
        )
        CalibrationItem.objects.create(item=copy, source=source)
    for expert in experts:
        CampaignMember.objects.get_or_create(campaign=round, user=expert, role=MemberRole.EXPERT)
    return round


def calibration_passes_refresh(*, round: Campaign, expert_id: int | None = None) -> int:
    """Records a pass for every requirement on `round` that an expert's figures now meet (one
    expert, or all; an expert given a new round is checked on that one instead); returns the
    passes recorded."""
    requirements = list(CalibrationRequirement.objects.filter(round=round))
    if not requirements:
        return 0
    figures = selectors.round_figures(round)
    recorded = 0
    for requirement in requirements:
        elsewhere = selectors.retakes_in_force(requirement)
        for pk, stats in figures.items():
            if (expert_id is not None and pk != expert_id) or pk in elsewhere:
                continue
            if selectors.meets(requirement, stats):
                calibration_pass_record(
                    requirement=requirement, expert_id=pk, items=stats.n, mae=stats.mae
                )
                recorded += 1
    return recorded


def calibration_gate_refresh(*, campaign_id: int, expert_id: int) -> bool:
    """Records the expert's pass of the campaign's requirement if their figures on their round
    (the requirement's, or the new one given to them) now meet it; whether they pass."""
    requirement = (
        CalibrationRequirement.objects.filter(campaign_id=campaign_id)
        .select_related("round")
        .first()
    )
    if requirement is None:
        return True
    round = selectors.round_for_expert(requirement, expert_id)
    stats = selectors.round_figures(round).get(expert_id)
    if not selectors.meets(requirement, stats):
        return False
    calibration_pass_record(
        requirement=requirement, expert_id=expert_id, items=stats.n, mae=stats.mae
    )
    return True


@transaction.atomic
def calibration_retake_create(
    *,
    requirement: CalibrationRequirement,
    expert: AbstractBaseUser,
    created_by: AbstractBaseUser | None,
) -> Campaign:
    """A new round for one expert who is blocked on the requirement: copies of gold items (of
    the round's scale) whose proofs the expert never graded, as many as the requirement's round
    holds and at least its `min_items`; the expert is then checked on it instead. Refused, saying
    why, when there are not enough such gold items. Idempotent while the round given last still
    has gold items for the expert (a double click, a retry): that round is returned."""
    requirement = (
        CalibrationRequirement.objects.select_for_update()
        .select_related("round")
        .get(pk=requirement.pk)
    )
    current = selectors.retakes_in_force(requirement).get(expert.pk)
    if (
        current is not None
        and Item.objects.filter(campaign=current.round).exclude(assignments__expert=expert).exists()
    ):
        return current.round
    graded = Grade.objects.filter(expert=expert).values("item__proof_id")
    wanted = max(requirement.min_items, Item.objects.filter(campaign=requirement.round).count())
    chosen, proofs = [], set()
    candidates = (
        selectors.gold_candidates()
        .filter(campaign__scale=requirement.round.scale)
        .exclude(proof_id__in=graded)
    )
    for item in candidates:
        if item.proof_id not in proofs:
            chosen.append(item)
            proofs.add(item.proof_id)
        if len(chosen) == wanted:
            break
    if len(chosen) < requirement.min_items:
        raise CalibrationError(
            f"expert: only {len(chosen)} gold item(s) of scale {requirement.round.scale} grade "
            f"proofs {expert.get_username()} has not graded; the requirement needs "
            f"{requirement.min_items}. Label more items (adjudication or import), or lower it."
        )
    earlier = CalibrationRetake.objects.filter(expert=expert).count()
    round = calibration_round_create(
        name=f"{requirement.round.name}: new round for {expert.get_username()}",
        slug=slugify(f"{requirement.round.slug}-for-{expert.get_username()}-{earlier + 1}")[:80],
        gold_items=chosen,
        created_by=created_by,
        guidelines=requirement.round.guidelines,
        experts=[expert],
    )
    CalibrationRetake.objects.update_or_create(
        requirement=requirement,
        expert=expert,
        defaults={"round": round, "replaces": requirement.round, "created_by": created_by},
    )
    return round


@transaction.atomic
def calibration_requirement_set(
    *,
    campaign: Campaign,
    round: Campaign,
    max_mae: Decimal,
    min_items: int,
    set_by: AbstractBaseUser | None,
) -> CalibrationRequirement:
    """Requires the round (with its threshold) before the campaign's experts receive items; the
    experts who already meet it pass at once."""
    try:
        requirement = calibration_requirement_save(
            campaign=campaign, round=round, max_mae=max_mae, min_items=min_items, set_by=set_by
        )
    except ValueError as exc:
        raise CalibrationError(str(exc)) from exc
    calibration_passes_refresh(round=round)
    return requirement
