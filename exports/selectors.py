"""Reads of the exports app. An export job is read by its creator and by admins; one that names
experts, by admins only; other roles see none."""

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.shortcuts import get_object_or_404

from annotation.models import Campaign, Item, TaskKind
from annotation.selectors.pairs import pair_proofs
from core.roles import Role, has_role
from core.visibility import ensure_not_blind
from exports.models import ExportJob

READERS = (Role.ADMIN, Role.RESEARCHER)


def _check(user: AbstractBaseUser) -> None:
    if not has_role(user, *READERS):
        raise PermissionDenied("Exports are for researchers and admins.")


def export_jobs_for_user(user: AbstractBaseUser) -> QuerySet[ExportJob]:
    _check(user)
    jobs = ExportJob.objects.select_related("campaign", "created_by").order_by("-created_at", "-id")
    if has_role(user, Role.ADMIN):
        return jobs
    own = jobs.filter(created_by=user)
    # a job naming experts (made while the user was an admin) is for admins only: any truthy
    # `expert_names` (a list, a string), read from the few jobs of one user
    naming = [pk for pk, f in own.values_list("pk", "filters") if f.get("expert_names")]
    return own.exclude(pk__in=naming)


def export_job_for_user(user: AbstractBaseUser, job_id: int) -> ExportJob:
    """One of the user's export jobs; 403 (core.visibility.BlindWork, naming why) while they
    hold blind a proof of its campaign: its files and sample records show them."""
    job = get_object_or_404(export_jobs_for_user(user), pk=job_id)
    ensure_not_blind(user, Item.objects.filter(campaign_id=job.campaign_id), "this export")
    if job.campaign.task_kind == TaskKind.PAIRWISE:
        ensure_not_blind(user, pair_proofs(job.campaign), "this export", proof="pk")
    return job


def campaigns_for_export(user: AbstractBaseUser) -> QuerySet[Campaign]:
    _check(user)
    return Campaign.objects.order_by("name", "id")
