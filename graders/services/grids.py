"""The evaluator design space in one job: every (endpoint, context, instruction) cell of a grid
graded k times over the campaign's labelled proofs, resumably; the report is in
graders/services/grid_report.py.

Each call (cell x proof x run) is a `GraderGridCall`: a score, or the reason and the raw reply. A
stored score is never asked again; a failure is asked again only by a retry (a new round). A
cell whose estimated cost is over the grid's budget is not started, and the report says so.
"""

from __future__ import annotations

from decimal import Decimal

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from annotation.models import Campaign, Item
from core.broker import broker_require
from graders import metrics
from graders.grading import INSTRUCTION_PROMPTS, OutputError, design_messages, read_reply
from graders.models import (
    CellState,
    GraderGrid,
    GraderGridCall,
    GraderGridCell,
    GridContext,
    GridInstruction,
    JobStatus,
)
from graders.services.evaluation_import import PredictionError
from graders.services.evaluations import MAX_RUNS
from jobs.services import job_send_on_commit
from llm.client import LLMClient, LLMError
from problems.selectors import first_references
from rubrics.models import LLMEndpoint
from rubrics.workflows import endpoint_parameters, llm_config

GRID_BATCH = 40
MAX_CELLS = 64
# Replies are not counted before they are made: a cell's estimate assumes this many completion
# tokens a call (or the endpoint's max_tokens when lower), and a prompt's tokens as its
# characters / 4.
REPLY_TOKENS_ESTIMATE = 1500
CHARS_PER_TOKEN = 4


def labelled_proof_items(campaign: Campaign):
    return Item.objects.filter(
        campaign=campaign, analysis__isnull=True, final_label__isnull=False
    ).order_by("id")


def _texts(items: list[Item]) -> dict[int, dict]:
    references = first_references({item.proof.problem_id for item in items})
    return {
        item.pk: {
            "problem": item.proof.problem.statement,
            "reference": references.get(item.proof.problem_id, ""),
            "scheme": item.scheme.text if item.scheme else "",
            "proof": item.proof.text,
        }
        for item in items
    }


def cell_messages(cell_context: str, cell_instruction: str, texts: dict) -> list[dict]:
    return design_messages(context=cell_context, instruction=cell_instruction, **texts)


def _estimate(endpoint: LLMEndpoint, prompt_chars: int, calls: int) -> tuple[int, Decimal | None]:
    reply = min(endpoint.max_tokens or REPLY_TOKENS_ESTIMATE, REPLY_TOKENS_ESTIMATE)
    prompt_tokens = prompt_chars // CHARS_PER_TOKEN
    completion_tokens = reply * calls
    cost = endpoint.token_cost(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens)
    return prompt_tokens + completion_tokens, cost


@transaction.atomic
def grid_create(
    *,
    user: AbstractBaseUser,
    campaign: Campaign,
    name: str,
    endpoints: list[LLMEndpoint],
    contexts: list[str],
    instructions: list[str],
    runs: int = 1,
    aggregation: str = "mean",
    budget: Decimal | None = None,
) -> GraderGrid:
    """Records a grid of cells over the campaign's labelled proofs, each with its estimated
    tokens and cost; a cell estimated over `budget` (US dollars) is not started. Queued once
    committed."""
    if aggregation not in metrics.AGGREGATIONS:
        raise PredictionError(
            f"aggregation {aggregation!r}: choose one of {', '.join(metrics.AGGREGATIONS)}"
        )
    if not 1 <= runs <= MAX_RUNS:
        raise PredictionError(f"runs: from 1 to {MAX_RUNS}")
    for field, chosen, known in (
        ("contexts", contexts, GridContext.values),
        ("instructions", instructions, GridInstruction.values),
    ):
        unknown = [c for c in chosen if c not in known]
        if not chosen or unknown:
            raise PredictionError(
                f"{field}: choose at least one of {', '.join(known)}"
                + (f" (not {', '.join(map(repr, unknown))})" if unknown else "")
            )
    if not endpoints:
        raise PredictionError("endpoints: choose at least one")
    if len(endpoints) * len(contexts) * len(instructions) > MAX_CELLS:
        raise PredictionError(f"at most {MAX_CELLS} cells in one grid")
    if budget is not None and budget < 0:
        raise PredictionError("budget: zero or more US dollars")
    items = list(labelled_proof_items(campaign).select_related("proof__problem", "scheme"))
    if not items:
        raise PredictionError(f"campaign {campaign.slug} has no labelled proof to grade")
    grid = GraderGrid.objects.create(
        campaign=campaign,
        name=name,
        runs=runs,
        aggregation=aggregation,
        budget=budget,
        created_by=user,
    )
    texts = _texts(items)
    chars: dict[tuple[str, str], int] = {}
    for context in dict.fromkeys(contexts):
        for instruction in dict.fromkeys(instructions):
            chars[context, instruction] = sum(
                len(m["content"])
                for item in items
                for m in cell_messages(context, instruction, texts[item.pk])
            )
    cells, started = [], 0
    for endpoint in dict.fromkeys(endpoints):
        for (context, instruction), prompt_chars in chars.items():
            tokens, cost = _estimate(endpoint, prompt_chars * runs, len(items) * runs)
            over = budget is not None and cost is not None and cost > budget
            started += 0 if over else 1
            cells.append(
                GraderGridCell(
                    grid=grid,
                    endpoint=endpoint,
                    context=context,
                    instruction=instruction,
                    state=CellState.OVER_BUDGET if over else CellState.WAITING,
                    estimated_tokens=tokens,
                    estimated_cost=cost,
                    parameters={
                        **endpoint_parameters(endpoint),
                        "prompt": INSTRUCTION_PROMPTS[instruction],
                        "context": context,
                    },
                )
            )
    GraderGridCell.objects.bulk_create(cells)
    grid.total = started * len(items) * runs
    grid.save(update_fields=["total"])
    broker_require()  # 503 and nothing saved while the job queue is away
    job_send_on_commit("grader_grid", [grid.pk])
    return grid


def grid_fail(*, grid_id: int, reason: str) -> None:
    """Records a failure outside the grid's own work; the calls stored so far stay."""
    GraderGrid.objects.filter(pk=grid_id).exclude(status=JobStatus.SUCCEEDED).update(
        status=JobStatus.FAILED, error=reason, finished_at=timezone.now()
    )


def grid_run(*, grid_id: int) -> GraderGrid:
    """Asks every started cell for each (proof, run) it has no call for, and, in a retry round,
    for its failed calls of earlier rounds; then writes the report. Idempotent: what is stored is
    never asked again, so a run after a lost worker goes on where the last one stopped."""
    from graders.services.grid_report import grid_report

    grid = GraderGrid.objects.select_related("campaign").get(pk=grid_id)
    if grid.status == JobStatus.SUCCEEDED:
        return grid
    GraderGrid.objects.filter(pk=grid.pk).update(status=JobStatus.RUNNING, error="")
    cells = list(grid.cells.select_related("endpoint").exclude(state=CellState.OVER_BUDGET))
    for cell in cells:
        _cell_run(grid, cell)
        GraderGridCell.objects.filter(pk=cell.pk).update(state=CellState.DONE)
    grid.refresh_from_db()
    scored = GraderGridCall.objects.filter(cell__grid=grid, score__isnull=False).count()
    grid.processed = scored
    grid.finished_at = timezone.now()
    if not scored:
        grid.status = JobStatus.FAILED
        grid.error = "No call gave a usable score" + (
            "" if cells else ": every cell is over the budget"
        )
        grid.report = grid_report(grid) if not cells else {}
    else:
        grid.status = JobStatus.SUCCEEDED
        grid.report = grid_report(grid)
    grid.save()
    return grid


def _cell_run(grid: GraderGrid, cell: GraderGridCell) -> None:
    client = LLMClient(llm_config(cell.endpoint, cell.parameters))
    last = 0
    while True:
        batch = list(
            labelled_proof_items(grid.campaign)
            .filter(id__gt=last)
            .select_related("proof__problem", "scheme")[:GRID_BATCH]
        )
        if not batch:
            return
        last = batch[-1].pk
        settled = set(
            cell.calls.filter(item__in=batch)
            .filter(Q(score__isnull=False) | Q(round__gte=grid.round))
            .values_list("item_id", "run_index")
        )
        wanted = [
            (item, run)
            for item in batch
            for run in range(grid.runs)
            if (item.pk, run) not in settled
        ]
        if not wanted:
            continue
        texts = _texts([item for item, _ in wanted])
        replies = client.complete_many(
            [cell_messages(cell.context, cell.instruction, texts[item.pk]) for item, _ in wanted]
        )
        _store_calls(grid, cell, wanted, replies)


@transaction.atomic
def _store_calls(grid: GraderGrid, cell: GraderGridCell, wanted: list, replies: list) -> None:
    prompt = completion = 0
    for (item, run), reply in zip(wanted, replies, strict=True):
        values = {"round": grid.round, "score": None, "finish_reason": ""}
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
                values |= {"score": float(read_reply(reply).score), "reason": ""}
            except OutputError as exc:
                values["reason"] = str(exc)
        if values["score"] is not None:
            values["raw_reply"] = ""  # the score is what is kept of a good reply
        GraderGridCall.objects.update_or_create(
            cell=cell, item=item, run_index=run, defaults=values
        )
    GraderGridCell.objects.filter(pk=cell.pk).update(
        prompt_tokens=F("prompt_tokens") + prompt,
        completion_tokens=F("completion_tokens") + completion,
    )
    GraderGrid.objects.filter(pk=grid.pk).update(
        processed=GraderGridCall.objects.filter(cell__grid=grid, score__isnull=False).count()
    )


@transaction.atomic
def grid_retry(*, grid: GraderGrid) -> GraderGrid:
    """Queues the grid again for its failed calls only (a new round)."""
    grid = GraderGrid.objects.select_for_update().get(pk=grid.pk)
    if grid.status in (JobStatus.PENDING, JobStatus.RUNNING):
        raise PredictionError("the grid is still running")
    if not GraderGridCall.objects.filter(cell__grid=grid, score__isnull=True).exists():
        raise PredictionError("no failed call to ask again")
    grid.round += 1
    grid.status = JobStatus.PENDING
    grid.finished_at = None
    grid.save(update_fields=["round", "status", "finished_at"])
    broker_require()
    job_send_on_commit("grader_grid", [grid.pk])
    return grid
