"""Reads of pairwise campaigns: a pair as its expert sees it (blind: the problem and the two
proofs' texts in the order drawn for them, never a model or a key), the campaign's progress and
cases, the final outcomes and their Bradley-Terry scores per proof and per generator."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied
from django.db.models import Count, Q
from django.http import Http404

from annotation.models import (
    Campaign,
    JudgementStatus,
    PairChoice,
    PairItem,
    PairJudgement,
    PairStatus,
)
from core.roles import Role, has_role
from problems.models import Problem, Proof

if TYPE_CHECKING:  # numpy, loaded by the one reader that fits scores
    from annotation.bradley_terry import BTScore

# a final choice as proof_a's share of the comparison
A_SHARE = {PairChoice.A: 1.0, PairChoice.B: 0.0, PairChoice.TIE: 0.5}


@dataclass(frozen=True)
class PairView:
    """What the pair page shows its expert: no model, no proof key, the shown order only."""

    pair: PairItem
    judgement: PairJudgement
    problem: Problem
    left_text: str
    right_text: str
    shown: str  # the submitted choice in the screen's terms (left / right / tie), or ""


def pair_view_for_user(*, pair_id: int, user: AbstractBaseUser) -> PairView:
    """The pair as `user` judges it: only an expert holding a judgement of the pair sees it."""
    judgement = (
        PairJudgement.objects.select_related("pair__campaign")
        .filter(pair_id=pair_id, expert=user)
        .first()
    )
    if judgement is None:
        if PairItem.objects.filter(pk=pair_id).exists():
            raise PermissionDenied("This pair is not yours to judge.")
        raise Http404("No such pair.")
    from annotation.services.pairs import shown_choice  # a pure rule of the services

    pair = judgement.pair
    texts = dict(
        Proof.objects.filter(id__in=[pair.proof_a_id, pair.proof_b_id]).values_list("id", "text")
    )
    left, right = (pair.proof_a_id, pair.proof_b_id)
    if not judgement.a_on_left:
        left, right = right, left
    problem = Problem.objects.only("id", "external_id", "statement").get(proofs__id=pair.proof_a_id)
    shown = (
        shown_choice(choice=judgement.choice, a_on_left=judgement.a_on_left)
        if judgement.is_submitted
        else ""
    )
    return PairView(pair, judgement, problem, texts[left], texts[right], shown)


@dataclass(frozen=True)
class PairProgress:
    pairs: int
    open: int
    disputed: int
    final: int
    judgements: int


def pair_progress(campaign: Campaign) -> PairProgress:
    counts = PairItem.objects.filter(campaign=campaign).aggregate(
        pairs=Count("id"),
        open=Count("id", filter=Q(status=PairStatus.OPEN)),
        disputed=Count("id", filter=Q(status=PairStatus.DISPUTED)),
        final=Count("id", filter=Q(status=PairStatus.FINAL)),
    )
    judgements = PairJudgement.objects.filter(
        pair__campaign=campaign, status=JudgementStatus.SUBMITTED
    ).count()
    return PairProgress(judgements=judgements, **counts)


def expert_pair_totals(*, campaign: Campaign, expert: AbstractBaseUser) -> int:
    return PairJudgement.objects.filter(
        pair__campaign=campaign, expert=expert, status=JudgementStatus.SUBMITTED
    ).count()


def disputed_pairs(campaign: Campaign) -> list[PairItem]:
    return list(
        PairItem.objects.filter(campaign=campaign, status=PairStatus.DISPUTED)
        .select_related("proof_a__problem")
        .order_by("id")
    )


def pair_case_for_user(*, pair_id: int, user: AbstractBaseUser) -> PairItem:
    """A pair as its adjudicator sees it: both proofs by their keys and every judgement."""
    if not has_role(user, Role.ADJUDICATOR, Role.ADMIN):
        raise PermissionDenied("Only adjudicators settle pairs.")
    pair = (
        PairItem.objects.select_related("campaign", "proof_a__problem", "proof_b", "settled_by")
        .filter(pk=pair_id)
        .first()
    )
    if pair is None:
        raise Http404("No such pair.")
    from core.visibility import ensure_not_blind

    ensure_not_blind(
        user,
        Proof.objects.filter(id__in=[pair.proof_a_id, pair.proof_b_id]),
        "this case",
        proof="pk",
    )
    pair.judgement_rows = list(
        pair.judgements.filter(status=JudgementStatus.SUBMITTED).select_related("expert")
    )
    return pair


def pair_outcomes(campaign: Campaign) -> list[dict]:
    """Every final pair: both proofs' ids, problem and generator, and the final choice."""
    return list(
        PairItem.objects.filter(campaign=campaign, status=PairStatus.FINAL)
        .order_by("id")
        .values(
            "id",
            "proof_a_id",
            "proof_b_id",
            "final_choice",
            "proof_a__problem_id",
            "proof_a__problem__external_id",
            "proof_a__generator",
            "proof_b__generator",
            "proof_a__sample_key",
            "proof_b__sample_key",
        )
    )


@dataclass(frozen=True)
class PairRatings:
    proofs: list[BTScore]  # key: proof id
    generators: list[BTScore]  # key: generator name
    proof_labels: dict[int, str]  # proof id -> "problem / generator / sample key"
    proof_problem: dict[int, int]  # proof id -> problem id
    outcomes: int


def pair_ratings(campaign: Campaign) -> PairRatings:
    """Bradley-Terry scores with 95% intervals (annotation.bradley_terry): of each proof from
    the final pairs, and of each generator from the final pairs between two generators."""
    from annotation.bradley_terry import bt_scores

    rows = pair_outcomes(campaign)
    proofs = bt_scores((r["proof_a_id"], r["proof_b_id"], A_SHARE[r["final_choice"]]) for r in rows)
    generators = bt_scores(
        (r["proof_a__generator"], r["proof_b__generator"], A_SHARE[r["final_choice"]]) for r in rows
    )
    labels: dict[int, str] = {}
    problem: dict[int, int] = {}
    for r in rows:
        for side in ("a", "b"):
            labels[r[f"proof_{side}_id"]] = (
                f"{r['proof_a__problem__external_id']} / {r[f'proof_{side}__generator']} / "
                f"{r[f'proof_{side}__sample_key']}"
            )
            problem[r[f"proof_{side}_id"]] = r["proof_a__problem_id"]
    return PairRatings(proofs, generators, labels, problem, len(rows))


def pair_proofs(campaign: Campaign):
    """The proofs of the campaign's pairs (for the blindness check of campaign-wide doors)."""
    pairs = PairItem.objects.filter(campaign=campaign)
    return Proof.objects.filter(
        Q(pk__in=pairs.values("proof_a_id")) | Q(pk__in=pairs.values("proof_b_id"))
    )


def pair_campaign_for_user(*, slug: str, user: AbstractBaseUser) -> Campaign:
    """A pairwise campaign's page: admins, adjudicators (its cases) and researchers (its
    scores) see any; others only a campaign they are a member of."""
    from annotation.selectors.campaigns import campaign_for_user

    if has_role(user, Role.ADMIN, Role.ADJUDICATOR, Role.RESEARCHER):
        campaign = Campaign.objects.filter(slug=slug).first()
        if campaign is None:
            raise Http404("No such campaign.")
        return campaign
    return campaign_for_user(slug=slug, user=user)
