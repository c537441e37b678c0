"""A pairwise grader run: one endpoint asked, for every pair of proofs of one problem, which is
the better proof, once in each order (proof a shown first, then proof b shown first), resumably.

The pairs are a pairwise campaign's pairs, or, on any other campaign, its labelled proofs paired
per problem. Each call is a `PairwisePickRecord`: a pick naming the proof (a, b or tie) when the
reply kept the `pairwise_pick@v1` contract (graders.grading.read_pick), else the reason and the
raw reply, never a pick. A stored pick is never asked again; a failure only by a retry (a new
round). The position probe and the pairwise selection read the picks (graders.selectors).
"""

from __future__ import annotations

import itertools

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from annotation.models import Campaign, PairItem, TaskKind
from core.broker import broker_require
from graders import trust
from graders.grading import PICK_PROMPT, OutputError, pick_messages, read_pick
from graders.models import (
    JobStatus,
    PairwisePickRecord,
    PairwisePickRun,
    PickOrder,
    PickSource,
)
from graders.services.evaluation_import import PredictionError
from graders.services.grids import labelled_proof_items
from jobs.services import job_send_on_commit
from llm.client import LLMClient, LLMError
from problems.models import Proof
from rubrics.models import LLMEndpoint
from rubrics.workflows import endpoint_parameters, llm_config

PICK_BATCH = 20  # pairs a batch (two calls each)
MAX_PAIRS = 2000
# the position each order shows first -> the proof a position names
PROOF_OF = {
    PickOrder.FORWARD: {"first": "a", "second": "b", "tie": "tie"},
    PickOrder.BACKWARD: {"first": "b", "second": "a", "tie": "tie"},
}


def pick_pairs(campaign: Campaign) -> list[tuple[int, int]]:
    """The (proof_a, proof_b) pairs a run over the campaign asks about, proof_a the smaller id:
    a pairwise campaign's pairs, else every two labelled proofs of one problem."""
    if campaign.task_kind == TaskKind.PAIRWISE:
        return list(
            PairItem.objects.filter(campaign=campaign)
            .order_by("proof_a_id", "proof_b_id")
            .values_list("proof_a_id", "proof_b_id")
        )
    by_problem: dict[int, set[int]] = {}
    for proof_id, problem_id in labelled_proof_items(campaign).values_list(
        "proof_id", "proof__problem_id"
    ):
        by_problem.setdefault(problem_id, set()).add(proof_id)
    pairs = [
        pair for proofs in by_problem.values() for pair in itertools.combinations(sorted(proofs), 2)
    ]
    return sorted(pairs)


@transaction.atomic
def pick_run_create(
    *, user: AbstractBaseUser, campaign: Campaign, endpoint: LLMEndpoint, name: str = ""
) -> PairwisePickRun:
    """Records a pairwise grader run of `endpoint` over the campaign's pairs (two calls a pair);
    queued once committed."""
    pairs = pick_pairs(campaign)
    if not pairs:
        raise PredictionError(
            f"campaign {campaign.slug} has no pair of proofs of one problem to compare"
        )
    if len(pairs) > MAX_PAIRS:
        raise PredictionError(f"{len(pairs)} pairs: at most {MAX_PAIRS} in one run")
    run = PairwisePickRun.objects.create(
        campaign=campaign,
        name=name or f"{endpoint.name} pairwise",
        source=PickSource.PAIRS if campaign.task_kind == TaskKind.PAIRWISE else PickSource.LABELLED,
        endpoint=endpoint,
        parameters={**endpoint_parameters(endpoint), "prompt": PICK_PROMPT},
        total=2 * len(pairs),
        created_by=user,
    )
    broker_require()  # 503 and nothing saved while the job queue is away
    job_send_on_commit("grader_picks", [run.pk])
    return run


def pick_run_fail(*, run_id: int, reason: str) -> None:
    """Records a failure outside the run's own work; the picks stored so far stay."""
    PairwisePickRun.objects.filter(pk=run_id).exclude(status=JobStatus.SUCCEEDED).update(
        status=JobStatus.FAILED, error=reason, finished_at=timezone.now()
    )


def pick_run(*, run_id: int) -> PairwisePickRun:
    """Asks, for each pair and order without a stored pick (and, in a retry round, for the failed
    calls of earlier rounds), then writes the position probe as the run's report. Idempotent:
    a pick is never asked again, so a run after a lost worker goes on where the last stopped."""
    from graders.selectors import pick_run_picks

    run = PairwisePickRun.objects.select_related("campaign", "endpoint").get(pk=run_id)
    if run.status == JobStatus.SUCCEEDED:
        return run
    PairwisePickRun.objects.filter(pk=run.pk).update(status=JobStatus.RUNNING, error="")
    client = LLMClient(llm_config(run.endpoint, run.parameters))
    pairs = pick_pairs(run.campaign)
    for start in range(0, len(pairs), PICK_BATCH):
        _batch_run(run, client, pairs[start : start + PICK_BATCH])
    run.refresh_from_db()
    records = run.records.all()
    picked = records.exclude(pick="").count()
    run.processed = picked
    run.finished_at = timezone.now()
    run.report = {
        "pairs": len(pairs),
        "picks": picked,
        "failures": records.filter(pick="").count(),
        "position": trust.position_probe(pick_run_picks(run)),
    }
    if not run.report["position"]["n"]:
        run.report["position"]["none"] = "No pair was picked in both orders (see the failures)."
    if picked:
        run.status = JobStatus.SUCCEEDED
    else:
        run.status = JobStatus.FAILED
        run.error = "No call gave a usable pick"
    run.save()
    if run.status == JobStatus.SUCCEEDED:
        reports_position_refresh(campaign=run.campaign)
    return run


def reports_position_refresh(*, campaign: Campaign) -> None:
    """Writes the position probe anew into the campaign's finished grader reports (evaluations
    and design-space studies), so that a pairwise run finished after a report shows on it; the
    pages read the stored report and nothing more."""
    from graders.models import GraderEvaluation, GraderGrid
    from graders.services.trust_evidence import position_evidence

    latest: dict = {}
    for evaluation in GraderEvaluation.objects.filter(
        campaign=campaign, status=JobStatus.SUCCEEDED
    ):
        if "position" in evaluation.report:
            key = evaluation.endpoint_id
            if key not in latest:
                latest[key] = position_evidence(campaign, endpoint=evaluation.endpoint)
            evaluation.report["position"] = latest[key]
            evaluation.save(update_fields=["report"])
    for grid in GraderGrid.objects.filter(campaign=campaign, status=JobStatus.SUCCEEDED):
        if "position" in grid.report:
            if None not in latest:
                latest[None] = position_evidence(campaign)
            grid.report["position"] = latest[None]
            grid.save(update_fields=["report"])


def _batch_run(run: PairwisePickRun, client: LLMClient, pairs: list[tuple[int, int]]) -> None:
    settled = set(
        run.records.filter(
            Q(proof_a_id__in=[a for a, _ in pairs]) & (~Q(pick="") | Q(round__gte=run.round))
        ).values_list("proof_a_id", "proof_b_id", "order")
    )
    wanted = [
        (a, b, order)
        for a, b in pairs
        for order in (PickOrder.FORWARD, PickOrder.BACKWARD)
        if (a, b, order) not in settled
    ]
    if not wanted:
        return
    proofs = Proof.objects.select_related("problem").in_bulk(
        {p for a, b, _ in wanted for p in (a, b)}
    )
    messages = []
    for a, b, order in wanted:
        first, second = (a, b) if order == PickOrder.FORWARD else (b, a)
        messages.append(
            pick_messages(
                problem=proofs[a].problem.statement,
                first=proofs[first].text,
                second=proofs[second].text,
            )
        )
    _store(run, wanted, client.complete_many(messages))


@transaction.atomic
def _store(run: PairwisePickRun, wanted: list, replies: list) -> None:
    prompt = completion = 0
    for (a, b, order), reply in zip(wanted, replies, strict=True):
        values = {"round": run.round, "pick": "", "finish_reason": ""}
        if isinstance(reply, LLMError):
            values |= {"reason": str(reply), "raw_reply": reply.raw or ""}
        else:
            usage = reply.usage
            prompt += usage.prompt_tokens
            completion += usage.completion_tokens
            values |= {
                "prompt_tokens": usage.prompt_tokens,
                "completion_tokens": usage.completion_tokens,
                "finish_reason": reply.finish_reason or "",
                "raw_reply": reply.text.replace("\x00", "\ufffd"),
            }
            try:
                values |= {"pick": PROOF_OF[order][read_pick(reply)], "reason": ""}
            except OutputError as exc:
                values["reason"] = str(exc)
        PairwisePickRecord.objects.update_or_create(
            run=run, proof_a_id=a, proof_b_id=b, order=order, defaults=values
        )
    PairwisePickRun.objects.filter(pk=run.pk).update(
        prompt_tokens=F("prompt_tokens") + prompt,
        completion_tokens=F("completion_tokens") + completion,
        processed=PairwisePickRecord.objects.filter(run=run).exclude(pick="").count(),
    )


@transaction.atomic
def pick_run_retry(*, run: PairwisePickRun) -> PairwisePickRun:
    """Queues the run again for its failed calls only (a new round)."""
    run = PairwisePickRun.objects.select_for_update().get(pk=run.pk)
    if run.status in (JobStatus.PENDING, JobStatus.RUNNING):
        raise PredictionError("the run is still running")
    if not run.records.filter(pick="").exists():
        raise PredictionError("no failed call to ask again")
    run.round += 1
    run.status = JobStatus.PENDING
    run.finished_at = None
    run.save(update_fields=["round", "status", "finished_at"])
    broker_require()
    job_send_on_commit("grader_picks", [run.pk])
    return run
