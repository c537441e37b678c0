"""Writes of calibration: rounds made of gold items, a campaign's requirement of a passed round
and the passes of it, and the gate assignment asks (`calibration_gate_check`, registered with
`annotation.calibration_gate` from CalibrationConfig.ready)."""

from __future__ import annotations

from decimal import Decimal

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.urls import reverse
from django.utils.text import slugify

from annotation.calibration_gate import CalibrationRequired
from annotation.models import (
    Campaign,
    CampaignMember,
    Grade,
    Item,
    MemberRole,
    TaskKind,
)
from annotation.selectors import gold_never_held
from annotation.services import campaign_create
from calibration import selectors
from calibration.models import (
    CalibrationItem,
    CalibrationPass,
    CalibrationRequirement,
    CalibrationRetake,
)


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
            design="gold",
            double_design="fixed",
            double_probability=0.0,
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
        and gold_never_held(campaign_id=current.round_id, expert_id=expert.pk) is not None
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
    """Requires the round (with its threshold) before the campaign's experts receive items, or
    changes the requirement: the passes of an earlier threshold are dropped, the experts who
    already meet it pass at once, and the campaign's experts become experts of the round."""
    if campaign.is_calibration:
        raise CalibrationError("campaign: a calibration round cannot require another")
    if not round.is_calibration:
        raise CalibrationError(f"round: {round.slug!r} is not a calibration round")
    if round.scale != campaign.scale:
        raise CalibrationError(
            f"round: its scale ({round.scale}) differs from the campaign's ({campaign.scale})"
        )
    if max_mae is None or Decimal(max_mae) < 0:
        raise CalibrationError("max_mae: give a mean absolute error of 0 or more")
    if min_items is None or int(min_items) < 1:
        raise CalibrationError("min_items: give at least 1 gold item")
    # A first requirement has no row to lock: the campaign's row serialises two sets at once
    # (a double click), so the second one changes the requirement the first one made.
    Campaign.objects.select_for_update().filter(pk=campaign.pk).first()
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
        calibration_round_join(round_id=round.pk, user_id=user_id)
    calibration_passes_refresh(round=round)
    return requirement


@transaction.atomic
def calibration_requirement_remove(*, campaign: Campaign) -> None:
    CalibrationRequirement.objects.filter(campaign=campaign).delete()
    Campaign.objects.filter(pk=campaign.pk).update(calibration_required=False)
    campaign.calibration_required = False


def calibration_round_join(*, round_id: int, user_id: int) -> None:
    """The user becomes an expert of the round (an expert of a campaign that requires a
    calibration round may grade that round)."""
    CampaignMember.objects.get_or_create(
        campaign_id=round_id, user_id=user_id, role=MemberRole.EXPERT
    )


def calibration_rounds_join(*, campaign_id: int, user_id: int) -> None:
    """A new expert of the campaign becomes an expert of the round it requires, if any."""
    for round_id in CalibrationRequirement.objects.filter(campaign_id=campaign_id).values_list(
        "round_id", flat=True
    ):
        calibration_round_join(round_id=round_id, user_id=user_id)


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


def _blocking(campaign: Campaign, expert: AbstractBaseUser) -> CalibrationRequirement | None:
    return (
        CalibrationRequirement.objects.filter(campaign_id=campaign.pk)
        .exclude(passes__expert_id=expert.pk)
        .select_related("round", "campaign")
        .first()
    )


def calibration_gate_check(*, campaign: Campaign, expert: AbstractBaseUser) -> None:
    """CalibrationRequired when the campaign requires a calibration round the expert has not
    passed (one query once passed). Without a pass on record, the pass the expert earned since
    is recorded (`calibration_gate_refresh`) and the check runs again; submissions pay nothing
    for the gate. The message says what to do and links the page of where they stand."""
    blocking = _blocking(campaign, expert)
    if blocking is None:
        return
    calibration_gate_refresh(campaign_id=campaign.pk, expert_id=expert.pk)
    blocking = _blocking(campaign, expert)
    if blocking is not None:
        standing_url = reverse("calibration:standing", args=[blocking.campaign.slug])
        raise CalibrationRequired(
            f"{blocking.campaign.name} needs a passed calibration round before it gives you "
            f"items: {blocking.describe()}. Where you stand, the round to grade and what to "
            f"do next: {standing_url}",
            standing_url=standing_url,
        )
