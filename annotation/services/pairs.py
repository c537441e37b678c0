"""Writes of pairwise campaigns: pairs made from a problem's proofs, the lease an expert takes
on a pair (its judgement row, with the shown order drawn at random), the judgement's submission
(stored against the pair's proof keys), the case two different judgements open, and its
settlement by an adjudicator."""

from __future__ import annotations

import random
import secrets
from datetime import timedelta
from itertools import combinations

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Count, Exists, F, OuterRef, Q
from django.utils import timezone

from annotation.models import (
    Campaign,
    CampaignMember,
    JudgementStatus,
    MemberRole,
    PairChoice,
    PairItem,
    PairJudgement,
    PairLabelSource,
    PairStatus,
    TaskKind,
)
from core.queries import of_ids
from core.roles import Role, has_role
from problems.models import Proof

# What the expert pressed, in the screen's order: the left proof (shown as A), the right (B).
SHOWN_CHOICES = ("left", "right", "tie")
REASON_MAX = 4000


class PairError(ValueError):
    """A pairwise write that cannot be done; the message says why."""


def _ensure_pairwise(campaign: Campaign) -> None:
    if campaign.task_kind != TaskKind.PAIRWISE:
        raise PairError(f"Campaign {campaign.slug} is not a pairwise campaign.")


def normalised_choice(*, shown: str, a_on_left: bool) -> str:
    """The choice against the pair's keys from the one pressed on the screen."""
    if shown not in SHOWN_CHOICES:
        raise PairError(f"choice: {shown!r} is not one of {', '.join(SHOWN_CHOICES)}.")
    if shown == "tie":
        return PairChoice.TIE
    left, right = (PairChoice.A, PairChoice.B) if a_on_left else (PairChoice.B, PairChoice.A)
    return left if shown == "left" else right


def shown_choice(*, choice: str, a_on_left: bool) -> str:
    """The screen's name of a stored choice for the order this judgement was shown in."""
    if choice == PairChoice.TIE:
        return "tie"
    return "left" if (choice == PairChoice.A) == a_on_left else "right"


@transaction.atomic
def pairs_create(
    *,
    campaign: Campaign,
    proof_ids: list[int],
    max_per_problem: int | None = None,
    required_judgements: int = 2,
    seed: int = 0,
) -> int:
    """Pairs of the given proofs, two proofs of one problem each: every pair of a problem's
    proofs, or a seeded sample of `max_per_problem` of them. Pairs already in the campaign are
    kept as they are. Returns how many pairs were added."""
    _ensure_pairwise(campaign)
    if required_judgements < 1:
        raise PairError("required_judgements: at least 1.")
    if max_per_problem is not None and max_per_problem < 1:
        raise PairError("max_per_problem: at least 1, or empty for every pair.")
    by_problem: dict[int, list[int]] = {}
    rows = of_ids(Proof.objects.all(), "id", proof_ids).order_by("problem_id", "id")
    for proof_id, problem_id in rows.values_list("id", "problem_id"):
        by_problem.setdefault(problem_id, []).append(proof_id)
    missing = set(proof_ids) - {p for ids in by_problem.values() for p in ids}
    if missing:
        raise PairError(f"proof_ids: no proof with id {', '.join(map(str, sorted(missing)))}.")
    new: list[PairItem] = []
    for problem_id, ids in sorted(by_problem.items()):
        pairs = list(combinations(ids, 2))
        if max_per_problem is not None and len(pairs) > max_per_problem:
            pairs = sorted(random.Random(f"{seed}:{problem_id}").sample(pairs, max_per_problem))
        new += [
            PairItem(
                campaign=campaign,
                proof_a_id=a,
                proof_b_id=b,
                required_judgements=required_judgements,
            )
            for a, b in pairs
        ]
    before = PairItem.objects.filter(campaign=campaign).count()
    PairItem.objects.bulk_create(new, ignore_conflicts=True)
    return PairItem.objects.filter(campaign=campaign).count() - before


def _ensure_expert(campaign: Campaign, expert: AbstractBaseUser) -> None:
    if not CampaignMember.objects.filter(
        campaign=campaign, user=expert, role=MemberRole.EXPERT
    ).exists():
        raise PairError("You are not an expert of this campaign.")


@transaction.atomic
def pair_next(
    *, campaign: Campaign, expert: AbstractBaseUser, after: int | None = None
) -> PairJudgement | None:
    """The expert's next pair: their own unsubmitted lease first (renewed), else a new lease on
    an open pair with a free slot that they have not judged (the pair closest to done first),
    shown in an order drawn at random and recorded. None: no work left."""
    _ensure_pairwise(campaign)
    _ensure_expert(campaign, expert)
    if not campaign.is_open:
        return None
    now = timezone.now()
    until = now + timedelta(minutes=campaign.lease_minutes)
    own = (
        PairJudgement.objects.select_for_update()
        .filter(pair__campaign=campaign, expert=expert)
        .exclude(status=JudgementStatus.SUBMITTED)
        .filter(pair__status=PairStatus.OPEN)
        .order_by("status", "created_at", "id")  # active before released
    )
    if after is not None:
        own = own.exclude(pair_id=after)
    for mine in own.filter(status=JudgementStatus.ACTIVE)[:8]:
        if mine.leased_until <= now and not _slot_free(mine.pair_id, now, but=mine.pk):
            # the lease ran out and others took the pair's slots meanwhile: it goes back
            mine.status = JudgementStatus.RELEASED
            mine.save(update_fields=["status", "updated_at"])
            continue
        mine.leased_until = until
        mine.save(update_fields=["leased_until", "updated_at"])
        return mine
    taken = Count(
        "judgements",
        filter=Q(judgements__status=JudgementStatus.SUBMITTED)
        | Q(judgements__status=JudgementStatus.ACTIVE, judgements__leased_until__gt=now),
    )
    candidates = (
        PairItem.objects.filter(campaign=campaign, status=PairStatus.OPEN)
        .exclude(
            Exists(
                PairJudgement.objects.filter(
                    pair_id=OuterRef("pk"),
                    expert=expert,
                    status__in=[JudgementStatus.SUBMITTED, JudgementStatus.ACTIVE],
                )
            )
        )
        .annotate(taken=taken)
        .filter(taken__lt=F("required_judgements"))
        .order_by("-submitted_count", "id")
    )
    if after is not None:
        candidates = candidates.exclude(pk=after)
    pair_ids = list(candidates.values_list("id", flat=True)[:20])
    locked: list[int] = []
    # a pair another expert is leasing or submitting right now is skipped, then, when no other
    # pair is free, waited on and rechecked: never "nothing left" because of a passing lock
    for skip_locked, ids in ((True, pair_ids), (False, locked)):
        for pair_id in ids:
            pair = PairItem.objects.select_for_update(skip_locked=skip_locked)
            pair = pair.filter(pk=pair_id).first()
            if pair is None and skip_locked:
                locked.append(pair_id)
            if pair is not None and _slot_free(pair.pk, now):  # not taken while we looked
                return _pair_lease(pair=pair, expert=expert, until=until)
    return None


def _pair_lease(*, pair: PairItem, expert: AbstractBaseUser, until) -> PairJudgement:
    """The expert's lease on a pair with a free slot (under its row lock)."""
    judgement, created = PairJudgement.objects.get_or_create(
        pair=pair,
        expert=expert,
        defaults={"leased_until": until, "a_on_left": bool(secrets.randbelow(2))},
    )
    if not created:  # a released lease taken up again: the same shown order as before
        judgement.status = JudgementStatus.ACTIVE
        judgement.leased_until = until
        judgement.save(update_fields=["status", "leased_until", "updated_at"])
    return judgement


@transaction.atomic
def pair_assign(
    *, pair_id: int, expert: AbstractBaseUser, assigned_by: AbstractBaseUser
) -> PairJudgement:
    """An admin gives a pair to an expert by hand: a lease (the campaign's minutes, renewed by
    next) that "next" serves them before anything new. Refused when the expert is not an expert
    of the campaign, has judged the pair, or the pair has no free slot."""
    pair = (
        PairItem.objects.select_for_update().select_related("campaign").filter(pk=pair_id).first()
    )
    if pair is None:
        raise PairError("pair: no such pair.")
    _ensure_expert(pair.campaign, expert)
    if pair.status != PairStatus.OPEN:
        raise PairError("pair: it needs no more judgements.")
    now = timezone.now()
    existing = PairJudgement.objects.filter(pair=pair, expert=expert).first()
    if existing is not None and existing.is_submitted:
        raise PairError(f"expert: {expert.get_username()} has judged this pair.")
    if not _slot_free(pair.pk, now, but=existing.pk if existing else None):
        raise PairError("pair: every judgement slot is taken or leased.")
    until = now + timedelta(minutes=pair.campaign.lease_minutes)
    if existing is None:
        return PairJudgement.objects.create(
            pair=pair,
            expert=expert,
            leased_until=until,
            a_on_left=bool(secrets.randbelow(2)),
            assigned_by=assigned_by,
        )
    existing.status = JudgementStatus.ACTIVE
    existing.leased_until = until
    existing.assigned_by = assigned_by
    existing.save(update_fields=["status", "leased_until", "assigned_by", "updated_at"])
    return existing


def _slot_free(pair_id: int, now, *, but: int | None = None) -> bool:
    """Whether the pair has a judgement slot that no submitted judgement or live lease (other
    than judgement `but`) takes. Asked under the pair's row lock."""
    taken = PairJudgement.objects.filter(pair_id=pair_id).filter(
        Q(status=JudgementStatus.SUBMITTED) | Q(status=JudgementStatus.ACTIVE, leased_until__gt=now)
    )
    if but is not None:
        taken = taken.exclude(pk=but)
    required = PairItem.objects.filter(pk=pair_id).values_list("required_judgements", flat=True)
    return taken.count() < required[0]


@transaction.atomic
def pair_judgement_release(*, judgement: PairJudgement) -> PairJudgement:
    """The expert moves on without judging: the slot is free for another expert."""
    if judgement.is_submitted:
        raise PairError("This judgement is submitted; it cannot be released.")
    judgement.status = JudgementStatus.RELEASED
    judgement.save(update_fields=["status", "updated_at"])
    return judgement


@transaction.atomic
def pair_judgement_submit(
    *, judgement_id: int, expert: AbstractBaseUser, shown: str, reason: str = ""
) -> PairJudgement:
    """Submit (or, while the pair is not final, revise) the expert's judgement: `shown` is what
    they pressed (left / right / tie), stored against the pair's keys. The same answer again
    (a double click, a retry) changes nothing. Once every required judgement is in, the pair is
    final when they agree, else disputed: a case for an adjudicator."""
    judgement = (
        PairJudgement.objects.select_for_update()
        .select_related("pair__campaign")
        .filter(pk=judgement_id)
        .first()
    )
    if judgement is None or judgement.expert_id != expert.pk:
        raise PairError("No such judgement of yours.")
    reason = (reason or "").strip()
    if len(reason) > REASON_MAX:
        raise PairError(f"reason: at most {REASON_MAX} characters.")
    choice = normalised_choice(shown=shown, a_on_left=judgement.a_on_left)
    pair = PairItem.objects.select_for_update().get(pk=judgement.pair_id)
    if judgement.is_submitted and judgement.choice == choice and judgement.reason == reason:
        return judgement  # the same answer again
    if pair.status != PairStatus.OPEN and not (
        judgement.is_submitted and pair.status == PairStatus.DISPUTED
    ):
        raise PairError("This pair is final: its judgements can no longer change.")
    if not pair.campaign.is_open:
        raise PairError("The campaign is closed.")
    first = not judgement.is_submitted
    now = timezone.now()
    lapsed = judgement.status != JudgementStatus.ACTIVE or judgement.leased_until <= now
    if first and lapsed and not _slot_free(pair.pk, now, but=judgement.pk):
        raise PairError(
            "Your lease on this pair ran out (or you skipped it) and other experts took its "
            "judgements meanwhile: nothing was saved. Go on to the next pair."
        )
    judgement.choice = choice
    judgement.reason = reason
    judgement.status = JudgementStatus.SUBMITTED
    judgement.submitted_at = now
    judgement.save()
    if first:
        pair.submitted_count += 1
    _pair_evaluate(pair)
    return judgement


def _pair_evaluate(pair: PairItem) -> None:
    """Final on agreement (or a single required judgement), disputed on disagreement."""
    choices = list(
        pair.judgements.filter(status=JudgementStatus.SUBMITTED).values_list("choice", flat=True)
    )
    if len(choices) < pair.required_judgements:
        pair.status = PairStatus.OPEN
    elif len(set(choices)) == 1:
        pair.status = PairStatus.FINAL
        pair.final_choice = choices[0]
        pair.final_source = (
            PairLabelSource.SINGLE if pair.required_judgements == 1 else PairLabelSource.AGREEMENT
        )
    else:
        pair.status = PairStatus.DISPUTED
    pair.save(update_fields=["status", "final_choice", "final_source", "submitted_count"])


@transaction.atomic
def pair_settle(
    *, pair_id: int, adjudicator: AbstractBaseUser, choice: str, reason: str
) -> PairItem:
    """An adjudicator settles a disputed pair with a choice against the pair's keys (a, b, tie)
    and a reason. One who judged the pair may not settle it."""
    if not has_role(adjudicator, Role.ADJUDICATOR, Role.ADMIN):
        raise PairError("Only adjudicators settle pairs.")
    pair = PairItem.objects.select_for_update().filter(pk=pair_id).first()
    if pair is None:
        raise PairError("No such pair.")
    if choice not in PairChoice.values:
        raise PairError(f"choice: {choice!r} is not one of {', '.join(PairChoice.values)}.")
    reason = (reason or "").strip()
    if not reason:
        raise PairError("reason: say why (it is kept with the final choice).")
    if (
        pair.status == PairStatus.FINAL
        and pair.final_source == PairLabelSource.ADJUDICATION
        and pair.final_choice == choice
    ):
        return pair  # settled so already (a double click)
    if pair.status != PairStatus.DISPUTED:
        raise PairError("Only a disputed pair is settled by an adjudicator.")
    if pair.judgements.filter(expert=adjudicator, status=JudgementStatus.SUBMITTED).exists():
        raise PairError("You judged this pair: another adjudicator settles it.")
    pair.status = PairStatus.FINAL
    pair.final_choice = choice
    pair.final_source = PairLabelSource.ADJUDICATION
    pair.settled_by = adjudicator
    pair.settled_reason = reason
    pair.settled_at = timezone.now()
    pair.save()
    return pair
