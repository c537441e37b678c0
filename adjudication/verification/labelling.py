"""The automated labelling loop (DeepSeekMath-V2, section 2.3) as services and its audit.

For each proof of a run: n verifier analyses; for each analysis reporting issues (score 0 or
0.5), m meta-verifications; then `adjudication.verification.labelling_loop.loop_decision` decides:
labelled -> an item of the run's automatic campaign with a final label of source "automatic";
routed -> an item in the human campaign the run names; failed -> the reason is recorded and the
proof can be retried. Every proof is one Celery job (`labelling_outcome_job`).

Samples are keyed per slot (`L<run>-<slot>.<attempt>`): a slot keeps its first scored sample, so
a retry asks again only for the slots whose sample failed or broke the output contract.

Audit: a seeded sample of automatically labelled proofs goes to an expert campaign; agreement
between the automatic and the expert labels is computed with adjudication.agreement.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Count, Q, Sum
from django.utils import timezone

from adjudication import agreement
from adjudication.models import (
    FinalLabel,
    JobStatus,
    LabellingOutcome,
    LabellingRun,
    LabelSource,
    LoopDecision,
    MetaVerification,
)
from adjudication.services.labels import final_label_set
from adjudication.signals import proof_labelled_by_loop
from adjudication.verification.labelling_loop import AnalysisResult, Outcome, loop_decision
from adjudication.verification.verifier_runs import (
    analyses_generate,
    meta_verifications_generate,
    sample_slots,
    slots_fill,
)
from annotation import scales
from annotation.models import Campaign, Item, Scale, TaskKind
from annotation.services import campaign_create, items_create_from_selection
from core.queries import of_ids
from jobs.services import job_send_on_commit
from llm import prompts
from llm.client import LLMError, Usage
from problems.models import Proof, VerifierAnalysis
from rubrics.models import LLMEndpoint

TERNARY_LABELS = [Decimal("0"), Decimal("0.5"), Decimal("1")]
FINISHED = {JobStatus.SUCCEEDED, JobStatus.FAILED}


class LabellingError(ValueError):
    """A loop run or audit that cannot be made as asked; the message names the field."""


@transaction.atomic
def labelling_run_start(
    *,
    proofs: Sequence[Proof],
    verifier: LLMEndpoint,
    meta_verifier: LLMEndpoint,
    n: int,
    m: int,
    k: int,
    confirm_at: Decimal = Decimal("1"),
    route_campaign: Campaign | None = None,
    auto_campaign: Campaign | None = None,
    user: AbstractBaseUser | None,
) -> LabellingRun:
    """Creates the run, one outcome per proof, and (on commit) one job per proof. Without an
    automatic campaign, the one of the latest run with the same configuration (verifier,
    meta-verifier, n, m, k, confirmation) is reused, so that repeated runs gather their labels in
    one place; only a configuration never run before gets a new campaign (scale 0 / 0.5 / 1)."""
    confirm_at = Decimal(str(confirm_at))
    problems = []
    if n < 1 or m < 1 or k < 1:
        problems.append("n, m and k: each must be at least 1")
    if k > n:
        problems.append(f"k: {k} valid analyses can never be found among n = {n}")
    if confirm_at not in (Decimal("0.5"), Decimal("1")):
        problems.append("confirm_at: a meta score of 1 confirms, or 0.5 when accepted")
    ids = sorted({proof.pk for proof in proofs})
    if not ids:
        problems.append("selection: no proofs selected")
    if route_campaign is not None and route_campaign.task_kind != TaskKind.PROOF_GRADING:
        problems.append("route_campaign: routed proofs go to a proof grading campaign")
    if problems:
        raise LabellingError("; ".join(problems))
    if auto_campaign is None:
        auto_campaign = _configuration_campaign(
            verifier=verifier, meta_verifier=meta_verifier, n=n, m=m, k=k, confirm_at=confirm_at
        )
    if auto_campaign is None:
        auto_campaign = campaign_create(
            name=(
                f"Automatic labels: {verifier.name} / {meta_verifier.name}, n = {n}, m = {m}, "
                f"k = {k}, confirm at {scales.shown(confirm_at)}"
            )[:200],
            slug=f"auto-labels-{uuid.uuid4().hex[:10]}",
            created_by=user,
            scale=Scale.TERNARY,
            double_share=Decimal("0"),
            guidelines="Final labels of the automated labelling loop (source automatic).",
        )
    elif auto_campaign.scale != Scale.TERNARY or auto_campaign.task_kind != TaskKind.PROOF_GRADING:
        raise LabellingError(
            "auto_campaign: automatic labels need a proof grading campaign on 0 / 0.5 / 1"
        )
    run = LabellingRun.objects.create(
        proof_ids=ids,
        n=n,
        m=m,
        k=k,
        confirm_at=confirm_at,
        verifier=verifier,
        meta_verifier=meta_verifier,
        auto_campaign=auto_campaign,
        route_campaign=route_campaign,
        total=len(ids),
        created_by=user,
    )
    outcomes = LabellingOutcome.objects.bulk_create(
        LabellingOutcome(run=run, proof_id=proof_id) for proof_id in ids
    )
    job_send_on_commit("labelling", [outcome.pk for outcome in outcomes])
    return run


def _configuration_campaign(
    *,
    verifier: LLMEndpoint,
    meta_verifier: LLMEndpoint,
    n: int,
    m: int,
    k: int,
    confirm_at: Decimal,
) -> Campaign | None:
    """The automatic campaign of the latest run with this configuration, if any."""
    run = (
        LabellingRun.objects.filter(
            verifier=verifier, meta_verifier=meta_verifier, n=n, m=m, k=k, confirm_at=confirm_at
        )
        .select_related("auto_campaign")
        .order_by("-pk")
        .first()
    )
    return None if run is None else run.auto_campaign


@transaction.atomic
def labelling_run_retry_failed(*, run: LabellingRun) -> int:
    """Sends every failed proof of the run through the loop again; returns how many."""
    failed = list(
        LabellingOutcome.objects.select_for_update().filter(run=run, status=JobStatus.FAILED)
    )
    for outcome in failed:
        outcome.status = JobStatus.PENDING
        outcome.save(update_fields=["status", "updated_at"])
    if failed:
        _run_refresh(run.pk)
        job_send_on_commit("labelling", [outcome.pk for outcome in failed])
    return len(failed)


def _run_refresh(run_id: int) -> LabellingRun:
    """Recounts the run's outcomes and tokens under a lock on the run row."""
    run = LabellingRun.objects.select_for_update().get(pk=run_id)
    counts = run.outcomes.aggregate(
        labelled=Count("id", filter=Q(decision=LoopDecision.LABELLED)),
        routed=Count("id", filter=Q(decision=LoopDecision.ROUTED)),
        failed=Count("id", filter=Q(status=JobStatus.FAILED)),
        started=Count("id", filter=~Q(status=JobStatus.PENDING)),
        total=Count("id"),
        prompt=Sum("prompt_tokens"),
        completion=Sum("completion_tokens"),
        meta_prompt=Sum("meta_prompt_tokens"),
        meta_completion=Sum("meta_completion_tokens"),
    )
    run.total = counts["total"]
    run.labelled_count = counts["labelled"]
    run.routed_count = counts["routed"]
    run.failed_count = counts["failed"]
    run.prompt_tokens = counts["prompt"] or 0
    run.completion_tokens = counts["completion"] or 0
    run.meta_prompt_tokens = counts["meta_prompt"] or 0
    run.meta_completion_tokens = counts["meta_completion"] or 0
    if run.finished_count == run.total:
        run.status = JobStatus.SUCCEEDED
        run.finished_at = run.finished_at or timezone.now()
    else:
        run.status = JobStatus.RUNNING if counts["started"] else JobStatus.PENDING
        run.finished_at = None
    run.save()
    return run


# --- One proof ----------------------------------------------------------------------------------


def _score(row) -> Decimal | None:
    return None if row is None else row.score


def labelling_outcome_execute(*, outcome_id: int, final_attempt: bool = True) -> LabellingOutcome:
    """Runs the loop for one proof. Idempotent: a decided proof is left alone, stored samples
    are never asked for again. A transient provider error is raised for the job to retry later
    (unless this is the final attempt); any other failure decides "failed" with the reason."""
    with transaction.atomic():
        outcome = LabellingOutcome.objects.select_for_update().get(pk=outcome_id)
        if outcome.status in FINISHED:
            return outcome
        outcome.status = JobStatus.RUNNING
        outcome.save(update_fields=["status", "updated_at"])
        _run_refresh(outcome.run_id)
    outcome = LabellingOutcome.objects.select_related(
        "run__verifier", "run__meta_verifier", "proof__problem"
    ).get(pk=outcome_id)
    run, proof = outcome.run, outcome.proof
    usage = meta_usage = Usage()
    failures: list[str] = []
    try:
        prefix = f"L{run.pk}-"
        stored = VerifierAnalysis.objects.filter(
            proof=proof, verifier=run.verifier.model, sample_key__startswith=prefix
        ).order_by("id")
        slots = sample_slots(list(stored), prefix, run.n, outcome.attempts)
        generated = analyses_generate(
            endpoint=run.verifier, proof=proof, keys=slots.keys, run_id=None
        )
        usage, transient = usage + generated.usage, generated.transient
        failures.extend(generated.failures)
        analyses = slots_fill(slots, generated.rows, prefix)
        results = []
        for analysis in analyses:
            if analysis is None or analysis.score is None or analysis.score >= 1:
                results.append(AnalysisResult(_score(analysis)))
                continue
            metas = MetaVerification.objects.filter(
                analysis=analysis, verifier=run.meta_verifier.model, sample_key__startswith=prefix
            ).order_by("id")
            meta_slots = sample_slots(list(metas), prefix, run.m, outcome.attempts)
            generated = meta_verifications_generate(
                endpoint=run.meta_verifier, analysis=analysis, keys=meta_slots.keys
            )
            usage, transient = usage + generated.usage, transient or generated.transient
            meta_usage = meta_usage + generated.usage
            failures.extend(f"analysis {analysis.pk}, {text}" for text in generated.failures)
            chosen = slots_fill(meta_slots, generated.rows, prefix)
            results.append(AnalysisResult(analysis.score, tuple(_score(m) for m in chosen)))
    except (LLMError, prompts.PromptError) as exc:
        return _record(outcome, JobStatus.FAILED, str(exc), usage, meta_usage)
    if transient is not None and not final_attempt:
        _record(outcome, JobStatus.RETRYING, f"retrying later: {transient}", usage, meta_usage)
        raise transient
    decision = loop_decision(results, n=run.n, m=run.m, k=run.k, confirm_at=run.confirm_at)
    details = {
        "analyses": [
            {
                "id": None if a is None else a.pk,
                "score": None if r.score is None else scales.shown(r.score),
                "meta_scores": [None if s is None else scales.shown(s) for s in r.meta_scores],
                "valid": bool(decision.valid[i]) if decision.valid else None,
            }
            for i, (a, r) in enumerate(zip(analyses, results, strict=True))
        ],
        "failures": failures,
    }
    reason = decision.reason
    if decision.outcome == Outcome.FAILED and failures:
        reason = f"{reason} ({'; '.join(failures)})"
    return _apply(outcome, decision.outcome, decision.label, reason, details, usage, meta_usage)


def labelling_outcome_fail(*, outcome_id: int, reason: str) -> LabellingOutcome:
    """Records a failure outside the loop's own decisions (a job that could not be queued, an
    unexpected error): the proof shows as failed, to retry."""
    outcome = LabellingOutcome.objects.get(pk=outcome_id)
    return _record(outcome, JobStatus.FAILED, reason, Usage(), Usage())


def _add_usage(outcome: LabellingOutcome, usage: Usage, meta_usage: Usage) -> None:
    """Adds the tokens of an attempt (all of them, and the meta-verifier's share)."""
    outcome.prompt_tokens += usage.prompt_tokens
    outcome.completion_tokens += usage.completion_tokens
    outcome.meta_prompt_tokens += meta_usage.prompt_tokens
    outcome.meta_completion_tokens += meta_usage.completion_tokens


@transaction.atomic
def _record(
    outcome: LabellingOutcome, state: str, reason: str, usage: Usage, meta_usage: Usage
) -> LabellingOutcome:
    outcome = LabellingOutcome.objects.select_for_update().get(pk=outcome.pk)
    outcome.status = state
    outcome.reason = reason
    _add_usage(outcome, usage, meta_usage)
    outcome.save()
    _run_refresh(outcome.run_id)
    return outcome


@transaction.atomic
def _apply(
    outcome: LabellingOutcome,
    result: Outcome,
    label: Decimal | None,
    reason: str,
    details: dict,
    usage: Usage,
    meta_usage: Usage,
) -> LabellingOutcome:
    outcome = (
        LabellingOutcome.objects.select_for_update(of=("self",))
        .select_related("run__auto_campaign", "run__route_campaign", "proof__problem")
        .get(pk=outcome.pk)
    )
    run = outcome.run
    outcome.details = details
    outcome.reason = reason
    _add_usage(outcome, usage, meta_usage)
    if result == Outcome.LABELLED:
        item = _item_for(run.auto_campaign, outcome.proof, required=1)
        final_label_set(
            item=item,
            value=label,
            source=LabelSource.AUTOMATIC,
            policy=f"automated labelling loop, run {run.pk} (n={run.n}, m={run.m}, k={run.k}, "
            f"confirm at {run.confirm_at.normalize():f}): {reason}",
            grade_ids=[],
        )
        outcome.status, outcome.decision = JobStatus.SUCCEEDED, LoopDecision.LABELLED
        outcome.label, outcome.item = label, item
        transaction.on_commit(
            lambda proof_id=outcome.proof_id: proof_labelled_by_loop.send(
                sender=LabellingOutcome, proof_id=proof_id
            )
        )
    elif result == Outcome.ROUTED:
        outcome.status, outcome.decision = JobStatus.SUCCEEDED, LoopDecision.ROUTED
        outcome.label = None
        if run.route_campaign is not None:
            outcome.item = _item_for(run.route_campaign, outcome.proof, required=None)
        else:
            outcome.reason = f"{reason}; no human campaign was chosen for routed proofs"
    else:
        outcome.status, outcome.label = JobStatus.FAILED, None
    outcome.save()
    _run_refresh(run.pk)
    return outcome


def _item_for(campaign: Campaign, proof: Proof, *, required: int | None) -> Item:
    items_create_from_selection(campaign=campaign, proofs=[proof], required_judgements=required)
    return Item.objects.get(campaign=campaign, proof=proof, analysis__isnull=True)


# --- Audit --------------------------------------------------------------------------------------


@transaction.atomic
def labelling_audit_send(
    *, run: LabellingRun, campaign: Campaign, size: int, seed: int = 0
) -> list[Item]:
    """Sends a seeded sample of `size` automatically labelled proofs of the run (not yet sent) to
    an expert proof-grading campaign, for experts to label blind."""
    if campaign.task_kind != TaskKind.PROOF_GRADING:
        raise LabellingError("campaign: the audit needs a proof grading campaign")
    if campaign.pk == run.auto_campaign_id:
        raise LabellingError("campaign: choose an expert campaign, not the automatic one")
    if size < 1:
        raise LabellingError("size: send at least one proof")
    candidates = list(
        LabellingOutcome.objects.select_for_update(of=("self",))
        .filter(run=run, decision=LoopDecision.LABELLED, audit_item__isnull=True)
        .select_related("proof__problem")
        .order_by("id")
    )
    if not candidates:
        raise LabellingError("no automatically labelled proof of this run is left to audit")
    sample = random.Random(f"{seed}:{run.pk}").sample(candidates, min(size, len(candidates)))
    items = []
    for outcome in sorted(sample, key=lambda o: o.pk):
        outcome.audit_item = _item_for(campaign, outcome.proof, required=None)
        outcome.save(update_fields=["audit_item", "updated_at"])
        items.append(outcome.audit_item)
    if run.audit_campaign_id != campaign.pk:
        LabellingRun.objects.filter(pk=run.pk).update(audit_campaign=campaign)
    return items


@dataclass
class AuditAgreement:
    sent: int
    labelled_by_experts: int
    exact: float | None
    mean_absolute_difference: float | None
    kappa: float | None
    matrix: list[list[int]]
    labels: list[Decimal]
    conversion: str


def labelling_audit_agreement(run: LabellingRun) -> AuditAgreement:
    """Agreement between the automatic labels and the experts' final labels of the audit sample
    (expert labels on another scale are converted to 0 / 0.5 / 1 with the stated cuts)."""
    outcomes = list(
        LabellingOutcome.objects.filter(run=run, audit_item__isnull=False).select_related(
            "audit_item__campaign"
        )
    )
    expert = dict(
        of_ids(FinalLabel.objects.all(), "item", [o.audit_item_id for o in outcomes]).values_list(
            "item_id", "value"
        )
    )
    automatic, experts = [], []
    conversion = (
        "expert labels on 0 / 0.5 / 1 (a mean between two values counts as the nearest, "
        "halfway as the lower)"
    )
    for outcome in outcomes:
        if outcome.audit_item_id not in expert:
            continue
        scale = outcome.audit_item.campaign.scale
        if scale != Scale.TERNARY:
            conversion = (
                f"expert labels on {scale} mapped to 0-7, then 7 -> 1, 5-6 -> 0.5, 0-4 -> 0 "
                "(a label between two values counts as the nearest, halfway as the lower)"
            )
        automatic.append(outcome.label)
        experts.append(scales.ternary_of(expert[outcome.audit_item_id], scale))
    return AuditAgreement(
        sent=len(outcomes),
        labelled_by_experts=len(experts),
        exact=agreement.exact_agreement(automatic, experts),
        mean_absolute_difference=agreement.mean_absolute_difference(automatic, experts),
        kappa=agreement.quadratic_weighted_kappa(automatic, experts, TERNARY_LABELS),
        matrix=agreement.confusion_matrix(automatic, experts, TERNARY_LABELS),
        labels=TERNARY_LABELS,
        conversion=conversion,
    )
