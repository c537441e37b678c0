"""Reads for the verification pages and API: runs, their outcomes, analyses with their
meta-verifications, and the proof selection a run starts from."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Prefetch, QuerySet
from django.shortcuts import get_object_or_404

from adjudication.models import (
    LabellingOutcome,
    LabellingRun,
    MetaVerification,
    VerifierRun,
    VerifierRunKind,
)
from annotation.models import Campaign, CampaignStatus, Scale, TaskKind
from core.visibility import without_blind_proofs
from problems.models import Proof, VerifierAnalysis
from rubrics.models import LLMEndpoint


def analyses_selected(*, proofs: QuerySet[Proof], verifier: str = "") -> QuerySet:
    qs = VerifierAnalysis.objects.filter(proof__in=proofs).select_related("proof__problem")
    if verifier:
        qs = qs.filter(verifier=verifier)
    return qs.order_by("proof_id", "verifier", "sample_key")


def verifier_run_targets(
    *, kind: str, proofs: QuerySet[Proof], verifier: str = ""
) -> list[Proof] | list[VerifierAnalysis]:
    """What a verifier run works on: the proofs themselves for a verification run, else their
    analyses (by `verifier` when given) for a meta-verification or defect run."""
    if kind == VerifierRunKind.VERIFY:
        return list(proofs)
    return list(analyses_selected(proofs=proofs, verifier=verifier))


def endpoints() -> QuerySet[LLMEndpoint]:
    return LLMEndpoint.objects.order_by("name")


def grading_campaigns() -> QuerySet[Campaign]:
    return Campaign.objects.filter(
        task_kind=TaskKind.PROOF_GRADING, status=CampaignStatus.OPEN
    ).order_by("name")


def automatic_label_campaigns() -> QuerySet[Campaign]:
    """Campaigns that may hold the loop's automatic labels (proof grading on 0 / 0.5 / 1)."""
    return Campaign.objects.filter(task_kind=TaskKind.PROOF_GRADING, scale=Scale.TERNARY).order_by(
        "name"
    )


def verifier_runs_recent(limit: int = 20) -> list[VerifierRun]:
    return list(VerifierRun.objects.select_related("endpoint", "created_by")[:limit])


def labelling_runs_recent(limit: int = 20) -> list[LabellingRun]:
    return list(
        LabellingRun.objects.select_related("verifier", "meta_verifier", "created_by")[:limit]
    )


def verifier_run_detail(run_id: int) -> VerifierRun:
    return get_object_or_404(VerifierRun.objects.select_related("endpoint"), pk=run_id)


def labelling_run_detail(run_id: int) -> LabellingRun:
    return get_object_or_404(
        LabellingRun.objects.select_related(
            "verifier", "meta_verifier", "auto_campaign", "route_campaign", "audit_campaign"
        ),
        pk=run_id,
    )


def labelling_run_outcomes(run: LabellingRun, limit: int = 500) -> list[LabellingOutcome]:
    return list(
        run.outcomes.select_related("proof__problem", "item__campaign").order_by("id")[:limit]
    )


def analyses_with_meta(
    *, proof_id: int | None = None, verifier: str = "", user: AbstractBaseUser | None = None
) -> QuerySet:
    """Analyses (newest proofs first) with their meta-verifications, in two queries; for
    `user`, without the analyses of the proofs they hold blind (core.visibility)."""
    qs = VerifierAnalysis.objects.select_related("proof__problem").prefetch_related(
        Prefetch("meta_verifications", MetaVerification.objects.order_by("verifier", "sample_key"))
    )
    if proof_id is not None:
        qs = qs.filter(proof_id=proof_id)
    if verifier:
        qs = qs.filter(verifier=verifier)
    if user is not None:
        qs = without_blind_proofs(user, qs)
    return qs.order_by("-proof_id", "verifier", "sample_key")


def verifier_run_samples(
    run: VerifierRun, limit: int = 200, user: AbstractBaseUser | None = None
) -> list:
    """What the run produced (newest first): analyses, meta-verifications or suggestions; for
    `user`, none of the proofs they hold blind (core.visibility)."""
    if run.kind == "verify":
        qs = VerifierAnalysis.objects.filter(metadata__run=run.pk).select_related("proof__problem")
    elif run.kind == "meta_verify":
        qs = MetaVerification.objects.filter(run=run).select_related("analysis__proof__problem")
    else:
        return []
    if user is not None:
        qs = without_blind_proofs(
            user, qs, proof="proof" if run.kind == "verify" else "analysis__proof"
        )
    return list(qs.order_by("-id")[:limit])
