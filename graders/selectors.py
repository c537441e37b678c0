"""Reads of the graders app. Researchers and admins see every evaluation (researchers read every
campaign's final labels); other roles see none."""

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.shortcuts import get_object_or_404

from annotation.models import Campaign, Item
from core.roles import Role, has_role
from core.visibility import ensure_not_blind
from graders.models import GraderEvaluation, GraderGrid, GraderGridCall

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
