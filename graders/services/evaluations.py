"""Automatic graders against the expert labels: running a grader through an endpoint (k runs a
proof, retries of failed predictions) and the report against the experts. Importing a grader's
prediction files is in graders/services/evaluation_import.py.
"""

from __future__ import annotations

from collections import Counter

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from annotation.models import Campaign, Item
from annotation.scales import PredictionScale
from core.broker import broker_require
from graders import metrics
from graders.grading import PROMPT_VERSION, OutputError, grading_messages, read_reply
from graders.models import (
    GraderEvaluation,
    GraderPrediction,
    GraderPredictionFailure,
    JobStatus,
    PredictionSource,
)
from graders.services.evaluation_import import (
    MAX_ERRORS_SHOWN,
    PredictionError,
    errors_joined,
)
from graders.services.evaluation_report import evaluation_report
from graders.signals import grader_evaluated
from jobs.services import job_send_on_commit
from llm.client import LLMClient, LLMError, Usage
from problems.selectors import first_references
from rubrics.matching import ProofMatch, proofs_match
from rubrics.models import LLMEndpoint
from rubrics.workflows import endpoint_parameters, llm_config

RUN_BATCH = 50
MAX_RUNS = 16


@transaction.atomic
def evaluation_run_create(
    *,
    user: AbstractBaseUser,
    campaign: Campaign,
    endpoint: LLMEndpoint,
    name: str,
    runs: int = 1,
    aggregation: str = "mean",
) -> GraderEvaluation:
    """Records a run of `endpoint` over the campaign's labelled proofs (k runs each) and queues
    it once committed."""
    if aggregation not in metrics.AGGREGATIONS:
        raise PredictionError(
            f"aggregation {aggregation!r}: choose one of {', '.join(metrics.AGGREGATIONS)}"
        )
    if not 1 <= runs <= MAX_RUNS:
        raise PredictionError(f"runs: from 1 to {MAX_RUNS}")
    items = _labelled_proof_items(campaign)
    total = items.count()
    if not total:
        raise PredictionError(f"campaign {campaign.slug} has no labelled proof to grade")
    evaluation = GraderEvaluation.objects.create(
        campaign=campaign,
        name=name,
        source=PredictionSource.ENDPOINT,
        prediction_scale=PredictionScale.ZERO_TO_SEVEN,
        aggregation=aggregation,
        runs=runs,
        endpoint=endpoint,
        parameters={**endpoint_parameters(endpoint), "prompt": PROMPT_VERSION},
        total=total * runs,
        created_by=user,
    )
    broker_require()  # 503 and nothing saved while the job queue is away
    job_send_on_commit("grader_evaluation", [evaluation.pk])
    return evaluation


def evaluation_fail(*, evaluation_id: int, reason: str) -> None:
    """Records a failure outside the run's own work (its worker kept dying); the predictions
    stored so far stay, for a later run to complete."""
    GraderEvaluation.objects.filter(pk=evaluation_id).exclude(status=JobStatus.SUCCEEDED).update(
        status=JobStatus.FAILED, error=reason, finished_at=timezone.now()
    )


def _grading_messages(
    item: Item, matches: dict[int, ProofMatch], references: dict, prompt: str
) -> list:
    """The grader's prompt: with the matched cluster's representative and rubric, else with the
    problem's first reference solution and the whole scheme."""
    match = matches.get(item.proof_id)
    if match is not None:
        reference, scheme = match.cluster.solution, match.cluster.rubric
    else:
        reference = references.get(item.proof.problem_id, "")
        scheme = item.scheme.text if item.scheme else ""
    return grading_messages(
        problem=item.proof.statement_text,
        reference=reference,
        scheme=scheme,
        proof=item.proof.text,
        prompt=prompt,
    )


def _labelled_proof_items(campaign: Campaign):
    return Item.objects.filter(
        campaign=campaign, analysis__isnull=True, final_label__isnull=False
    ).order_by("id")


def evaluation_run(*, evaluation_id: int) -> GraderEvaluation:
    """Asks the endpoint for every missing (item, run) prediction, in batches, then reports.

    Idempotent: predictions already stored are kept, so a rerun (a retry) only asks for what is
    missing. A call that fails after its retries, or a reply that is incomplete or breaks the
    contract (no integer score from 0 to 7), is a `GraderPredictionFailure` with its raw reply
    and the reason; tokens are counted on the evaluation. The evaluation fails only when no
    prediction at all could be made.
    """
    evaluation = GraderEvaluation.objects.select_related("campaign", "endpoint").get(
        pk=evaluation_id
    )
    if evaluation.status == JobStatus.SUCCEEDED:
        return evaluation
    GraderEvaluation.objects.filter(pk=evaluation.pk).update(status=JobStatus.RUNNING, error="")
    client = LLMClient(llm_config(evaluation.endpoint, evaluation.parameters))
    prompt = evaluation.parameters.get("prompt") or PROMPT_VERSION
    done = set(evaluation.predictions.values_list("item_id", "run_index"))
    matched: dict[int, str] = {}  # proof id -> the RefGrader cluster whose rubric graded it
    last = 0
    while True:
        batch = list(
            _labelled_proof_items(evaluation.campaign)
            .filter(id__gt=last)
            .select_related("proof__problem", "proof__statement", "scheme")[:RUN_BATCH]
        )
        if not batch:
            break
        last = batch[-1].pk
        references = first_references({item.proof.problem_id for item in batch})
        wanted = [
            (item, run)
            for item in batch
            for run in range(evaluation.runs)
            if (item.pk, run) not in done
        ]
        # RefGrader schemes: each proof is graded with its closest cluster's rubric
        matches, unmatched, match_usage = proofs_match(
            proofs=list({i.pk: (i.proof, i.scheme) for i, _ in wanted if i.scheme}.values()),
            client=client,
            parameters=evaluation.parameters,
        )
        _add_tokens(evaluation, match_usage)  # the match calls count like the grading ones
        _store_match_failures(
            evaluation, [(i, run) for i, run in wanted if i.proof_id in unmatched], unmatched
        )
        wanted = [(item, run) for item, run in wanted if item.proof_id not in unmatched]
        matched |= {proof_id: match.cluster.label for proof_id, match in matches.items()}
        replies = client.complete_many(
            [_grading_messages(item, matches, references, prompt) for item, _ in wanted]
        )
        _store_replies(evaluation, wanted, replies)
        done = set(evaluation.predictions.values_list("item_id", "run_index"))
        GraderEvaluation.objects.filter(pk=evaluation.pk).update(processed=len(done))
    evaluation.refresh_from_db()
    failures = list(
        evaluation.failures.select_related("item__proof__problem", "item__proof__statement")
    )
    evaluation.counts = {
        "predictions": len(done),
        "proofs": len({item_id for item_id, _ in done}),
        "failed": len(failures),
        "failures": [_failure_words(f) for f in failures[:MAX_ERRORS_SHOWN]],
        **({"clusters": dict(sorted(Counter(matched.values()).items()))} if matched else {}),
    }
    evaluation.finished_at = timezone.now()
    if not done:
        evaluation.status = JobStatus.FAILED
        evaluation.error = "No prediction could be made: " + errors_joined(
            [_failure_words(f) for f in failures]
        )
    else:
        evaluation.status = JobStatus.SUCCEEDED
        evaluation.report = evaluation_report(evaluation)
    evaluation.save()
    if done:
        grader_evaluated.send(
            sender=GraderEvaluation,
            evaluation_id=evaluation.pk,
            campaign_id=evaluation.campaign_id,
        )
    return evaluation


def _failure_words(failure: GraderPredictionFailure) -> str:
    proof = failure.item.proof
    where = f"{proof.problem.external_id} by {proof.generator}, run {failure.run_index + 1}"
    return f"{where}: {failure.reason}"


@transaction.atomic
def _store_match_failures(
    evaluation: GraderEvaluation, wanted: list[tuple[Item, int]], unmatched: dict[int, str]
) -> None:
    """The predictions whose proof the RefGrader match step could not place: failed, with the
    match step's reason (its raw reply is in the reason), offered for retry like the others."""
    for item, run in wanted:
        GraderPredictionFailure.objects.update_or_create(
            evaluation=evaluation,
            item=item,
            run_index=run,
            defaults={"reason": f"matching step: {unmatched[item.proof_id]}", "raw_reply": ""},
        )


@transaction.atomic
def _store_replies(
    evaluation: GraderEvaluation, wanted: list[tuple[Item, int]], replies: list
) -> None:
    """One batch's predictions, failures (raw reply and reason) and tokens, together."""
    rows, failed, usage = [], [], Usage()
    for (item, run), reply in zip(wanted, replies, strict=True):
        if isinstance(reply, LLMError):
            failed.append((item, run, str(reply), reply.raw, ""))
            continue
        usage = usage + reply.usage
        try:
            graded = read_reply(reply)
        except OutputError as exc:
            failed.append((item, run, str(exc), reply.text, reply.finish_reason or ""))
            continue
        rows.append(
            GraderPrediction(
                evaluation=evaluation,
                item=item,
                run_index=run,
                score=graded.score,
                assessment=graded.assessment,
                errors=graded.errors,
            )
        )
    GraderPrediction.objects.bulk_create(rows, ignore_conflicts=True)
    for row in rows:
        GraderPredictionFailure.objects.filter(
            evaluation=evaluation, item=row.item, run_index=row.run_index
        ).delete()
    for item, run, reason, raw, finish_reason in failed:
        GraderPredictionFailure.objects.update_or_create(
            evaluation=evaluation,
            item=item,
            run_index=run,
            defaults={
                "reason": reason,
                "raw_reply": raw.replace("\x00", "\ufffd"),
                "finish_reason": finish_reason,
            },
        )
    _add_tokens(evaluation, usage)


def _add_tokens(evaluation: GraderEvaluation, usage: Usage) -> None:
    """Adds a batch's tokens (grading or RefGrader match calls) to the run's count."""
    GraderEvaluation.objects.filter(pk=evaluation.pk).update(
        prompt_tokens=F("prompt_tokens") + usage.prompt_tokens,
        completion_tokens=F("completion_tokens") + usage.completion_tokens,
    )


@transaction.atomic
def evaluation_run_retry(*, evaluation: GraderEvaluation) -> GraderEvaluation:
    """Queues an endpoint run again for its failed (and any missing) predictions only."""
    evaluation = GraderEvaluation.objects.select_for_update().get(pk=evaluation.pk)
    if evaluation.source != PredictionSource.ENDPOINT:
        raise PredictionError("only an endpoint run can be retried")
    if evaluation.status in (JobStatus.PENDING, JobStatus.RUNNING):
        raise PredictionError("the run is still in progress")
    wanted = _labelled_proof_items(evaluation.campaign).count() * evaluation.runs
    if evaluation.predictions.count() >= wanted:
        raise PredictionError("every prediction of this run is already made")
    evaluation.status = JobStatus.PENDING
    evaluation.finished_at = None
    evaluation.save(update_fields=["status", "finished_at"])
    broker_require()  # 503 and nothing saved while the job queue is away
    job_send_on_commit("grader_evaluation", [evaluation.pk])
    return evaluation
