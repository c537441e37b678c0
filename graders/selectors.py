"""Reads of the graders app. Researchers and admins see every evaluation (researchers read every
campaign's final labels); other roles see none."""

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.shortcuts import get_object_or_404

from annotation.models import Campaign, Item
from core.roles import Role, has_role
from core.visibility import ensure_not_blind
from graders import trust
from graders.models import (
    GraderEvaluation,
    GraderGrid,
    GraderGridCall,
    PairwisePickRun,
)
from jobs.models import JobStatus

READERS = (Role.ADMIN, Role.RESEARCHER)


def _check(user: AbstractBaseUser) -> None:
    if not has_role(user, *READERS):
        raise PermissionDenied("Grader evaluations are for researchers and admins.")


def campaigns_for_evaluation(user: AbstractBaseUser) -> QuerySet[Campaign]:
    _check(user)
    return Campaign.objects.order_by("name", "id")


def evaluations_for_user(user: AbstractBaseUser) -> QuerySet[GraderEvaluation]:
    _check(user)
    return GraderEvaluation.objects.select_related("campaign", "created_by", "endpoint").order_by(
        "-created_at", "-id"
    )


def evaluation_for_user(user: AbstractBaseUser, evaluation_id: int) -> GraderEvaluation:
    """One evaluation; 403 naming why (core.visibility.BlindWork) while the user holds one of
    its campaign's proofs ungraded as an expert: its report and failures show their labels,
    automatic ratings and models."""
    evaluation = get_object_or_404(evaluations_for_user(user), pk=evaluation_id)
    ensure_not_blind(
        user, Item.objects.filter(campaign_id=evaluation.campaign_id), "this evaluation"
    )
    return evaluation


def evaluation_failures(evaluation: GraderEvaluation, limit: int = 100) -> list:
    """The endpoint run's failed predictions, each with its raw reply and reason."""
    return list(
        evaluation.failures.select_related("item__proof__problem").order_by("item_id", "run_index")[
            :limit
        ]
    )


def grids_for_user(user: AbstractBaseUser) -> QuerySet[GraderGrid]:
    _check(user)
    return GraderGrid.objects.select_related("campaign", "created_by").order_by(
        "-created_at", "-id"
    )


def grid_for_user(user: AbstractBaseUser, grid_id: int) -> GraderGrid:
    """One design-space grid; 403 naming why while the user holds one of its campaign's proofs
    ungraded as an expert (its report shows labels, scores and models)."""
    grid = get_object_or_404(grids_for_user(user), pk=grid_id)
    ensure_not_blind(user, Item.objects.filter(campaign_id=grid.campaign_id), "this study")
    return grid


def grid_failed_calls(grid: GraderGrid, limit: int = 100) -> list:
    """The grid's calls without a usable reply, each with its reason and raw reply."""
    return list(
        GraderGridCall.objects.filter(cell__grid=grid, score__isnull=True)
        .select_related("cell__endpoint", "item__proof__problem")
        .order_by("cell_id", "item_id", "run_index")[:limit]
    )


# --- Pairwise grader runs (graders/services/pick_runs.py) ------------------------------------


def pick_runs_for_user(user: AbstractBaseUser) -> QuerySet[PairwisePickRun]:
    _check(user)
    return PairwisePickRun.objects.select_related("campaign", "endpoint", "created_by").order_by(
        "-created_at", "-id"
    )


def pick_run_failed_calls(run: PairwisePickRun, limit: int = 100) -> list:
    """The run's calls without a usable pick, each with its reason and raw reply."""
    return list(
        run.records.filter(pick="")
        .select_related("proof_a__problem", "proof_b")
        .order_by("proof_a_id", "proof_b_id", "order")[:limit]
    )


def pick_run_latest(campaign: Campaign, *, endpoint=None) -> PairwisePickRun | None:
    """The campaign's latest finished pairwise grader run: `endpoint`'s when it has one, else
    any endpoint's (the report names whose picks it shows)."""
    runs = PairwisePickRun.objects.filter(
        campaign=campaign, status=JobStatus.SUCCEEDED
    ).select_related("endpoint")
    if endpoint is not None:
        own = runs.filter(endpoint=endpoint).first()
        if own is not None:
            return own
    return runs.first()


def _both_orders(run: PairwisePickRun) -> dict[tuple[int, int], dict[str, str]]:
    picks: dict[tuple[int, int], dict[str, str]] = {}
    for a, b, order, pick in (
        run.records.exclude(pick="")
        .order_by("proof_a_id", "proof_b_id", "order")
        .values_list("proof_a_id", "proof_b_id", "order", "pick")
    ):
        picks.setdefault((a, b), {})[order] = pick
    return picks


def pick_run_picks(run: PairwisePickRun) -> list[trust.PairwisePick]:
    """The run's pairs picked in both orders, as the position probe reads them (problem: the
    proofs' problem; a pair with a failed call in either order is left out)."""
    from problems.models import Proof

    pairs = {k: v for k, v in _both_orders(run).items() if len(v) == 2}
    problem = dict(
        Proof.objects.filter(pk__in={a for a, _ in pairs}).values_list("id", "problem_id")
    )
    return [
        trust.PairwisePick(problem[a], orders["forward"], orders["backward"])
        for (a, b), orders in pairs.items()
    ]


PICK_SHARE = {"a": 1.0, "b": 0.0, "tie": 0.5}


def pick_run_shares(run: PairwisePickRun) -> dict[tuple[int, int], float]:
    """(proof_a, proof_b) -> proof_a's share, the mean over the orders picked (a pick that
    flips with the order is a half): what graders.pairwise.prefer_from_picks reads."""
    return {
        pair: sum(PICK_SHARE[p] for p in orders.values()) / len(orders)
        for pair, orders in _both_orders(run).items()
    }


def pick_run_failures(run: PairwisePickRun, limit: int = 100) -> list:
    return list(run.records.filter(pick="").order_by("proof_a_id", "proof_b_id", "order")[:limit])


def pick_campaign_for_user(user: AbstractBaseUser, slug: str) -> Campaign:
    """A campaign to run a pairwise grader over (researchers and admins); 403 naming why while
    the user holds one of its proofs ungraded as an expert (the picks name its proofs)."""
    from annotation.models import TaskKind
    from annotation.selectors.pairs import pair_proofs

    _check(user)
    campaign = get_object_or_404(Campaign, slug=slug)
    if campaign.task_kind == TaskKind.PAIRWISE:
        ensure_not_blind(user, pair_proofs(campaign), "this comparison", proof="pk")
    else:
        ensure_not_blind(user, Item.objects.filter(campaign=campaign), "this campaign's picks")
    return campaign


def pick_run_for_user(user: AbstractBaseUser, run_id: int) -> PairwisePickRun:
    run = get_object_or_404(pick_runs_for_user(user), pk=run_id)
    pick_campaign_for_user(user, run.campaign.slug)
    return run
