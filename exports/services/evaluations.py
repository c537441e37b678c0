"""Automatic graders against the expert labels: importing their predictions and the report.

Predictions come from a ProofGrader-style JSONL file (`{problem_id, generator, score,
assessment, errors}`, optionally `response_number`; several lines for one proof are k runs) or
from DeepSeekMath-V2's output files (`problem_idx`, `model_prediction.proof`,
`model_prediction.average_automatic_rating` in [0, 1]). Lines about proofs that are not in the
campaign are counted and skipped; a malformed line rejects the whole file with its line number.
"""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from collections.abc import Iterable
from decimal import Decimal

import orjson
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from adjudication import agreement
from annotation.models import Campaign, Item, Scale
from annotation.scales import nearest, ternary_of, to_0_7
from config.broker import broker_require
from exports import metrics
from exports.formats import DEFAULT_CUTS, first_references
from exports.grading import PROMPT_VERSION, OutputError, grading_messages, read_reply
from exports.models import (
    GraderEvaluation,
    GraderPrediction,
    GraderPredictionFailure,
    JobStatus,
    PredictionSource,
)
from exports.services.confidence import campaign_rater_model_fit
from llm.client import LLMClient, LLMError, Usage
from rubrics.matching import ProofMatch, proofs_match
from rubrics.models import LLMEndpoint
from rubrics.workflows import endpoint_parameters, llm_config

MAX_ERRORS_SHOWN = 20


class PredictionError(ValueError):
    """A predictions file that cannot be imported; the message names the lines."""


def _proof_index(campaign: Campaign) -> tuple[dict, dict]:
    """(problem external id, generator) -> [(sample_index, sample_key, item id)] and
    (problem external id, text hash) -> item id, for the campaign's proof items."""
    by_generator: dict[tuple[str, str], list] = defaultdict(list)
    by_text: dict[tuple[str, str], int] = {}
    rows = Item.objects.filter(campaign=campaign, analysis__isnull=True).values_list(
        "id",
        "proof__problem__external_id",
        "proof__generator",
        "proof__sample_index",
        "proof__sample_key",
        "proof__text_hash",
    )
    for item_id, problem, generator, index, key, text_hash in rows:
        by_generator[(problem, generator)].append((index, key, item_id))
        by_text[(problem, text_hash)] = item_id
    return by_generator, by_text


def _lines(data: bytes) -> Iterable[tuple[int, dict]]:
    for number, line in enumerate(data.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            raise PredictionError(f"line {number}: not JSON ({exc})") from exc
        if not isinstance(record, dict):
            raise PredictionError(f"line {number}: not a JSON object")
        yield number, record


def _number(record: dict, key: str, number: int, low: float, high: float) -> float:
    value = record.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise PredictionError(f"line {number}: field {key} must be a number, found {value!r}")
    if not low <= value <= high:
        raise PredictionError(f"line {number}: field {key} = {value} is outside {low:g}-{high:g}")
    return float(value)


def _proofgrader(data: bytes, campaign: Campaign) -> tuple[list[tuple[int, dict]], int]:
    by_generator, _ = _proof_index(campaign)
    matched, skipped, errors = [], 0, []
    for number, record in _lines(data):
        try:
            problem = record.get("problem_id")
            generator = record.get("generator")
            if not isinstance(problem, str) or not isinstance(generator, str):
                raise PredictionError(f"line {number}: problem_id and generator must be text")
            score = _number(record, "score", number, 0, 7)
            candidates = by_generator.get((problem, generator), [])
            response = record.get("response_number", record.get("sample_key"))
            if response is not None:
                candidates = [c for c in candidates if str(response) in (str(c[0]), c[1])]
            if not candidates:
                skipped += 1
                continue
            if len(candidates) > 1:
                raise PredictionError(
                    f"line {number}: {problem} by {generator} has {len(candidates)} proofs in "
                    "the campaign: give response_number"
                )
            errors_field = record.get("errors") or []
            matched.append(
                (
                    candidates[0][2],
                    {
                        "score": score,
                        "assessment": str(record.get("assessment") or ""),
                        "errors": errors_field
                        if isinstance(errors_field, list)
                        else [errors_field],
                    },
                )
            )
        except PredictionError as exc:
            errors.append(str(exc))
    if errors:
        raise PredictionError(_joined(errors))
    return matched, skipped


def _deepseek(data: bytes, campaign: Campaign) -> tuple[list[tuple[int, dict]], int]:
    _, by_text = _proof_index(campaign)
    matched, skipped, errors = [], 0, []
    for number, record in _lines(data):
        try:
            prediction = record.get("model_prediction")
            problem = record.get("problem_idx")
            if not isinstance(prediction, dict) or not isinstance(problem, str):
                raise PredictionError(f"line {number}: needs problem_idx and model_prediction")
            proof = prediction.get("proof")
            if not isinstance(proof, str):
                raise PredictionError(f"line {number}: model_prediction.proof must be text")
            score = _number(prediction, "average_automatic_rating", number, 0, 1)
            item_id = by_text.get((problem, hashlib.sha256(proof.encode()).hexdigest()))
            if item_id is None:
                skipped += 1
                continue
            matched.append((item_id, {"score": score, "assessment": "", "errors": []}))
        except PredictionError as exc:
            errors.append(str(exc))
    if errors:
        raise PredictionError(_joined(errors))
    return matched, skipped


def _joined(errors: list[str]) -> str:
    shown = errors[:MAX_ERRORS_SHOWN]
    more = len(errors) - len(shown)
    return "; ".join(shown) + (f"; and {more} more" if more else "")


@transaction.atomic
def evaluation_import(
    *,
    user: AbstractBaseUser,
    campaign: Campaign,
    name: str,
    source: str,
    data: bytes,
    aggregation: str = "mean",
) -> GraderEvaluation:
    """Reads a predictions file into a new evaluation and computes its report. All or nothing."""
    if aggregation not in metrics.AGGREGATIONS:
        raise PredictionError(
            f"aggregation {aggregation!r}: choose one of {', '.join(metrics.AGGREGATIONS)}"
        )
    if source == PredictionSource.PROOFGRADER_JSONL:
        matched, skipped = _proofgrader(data, campaign)
        scale = "0-7"
    elif source == PredictionSource.DEEPSEEK_OUTPUTS:
        matched, skipped = _deepseek(data, campaign)
        scale = "0-1"
    else:
        raise PredictionError(f"unknown source {source!r}")
    if not matched:
        raise PredictionError(
            f"none of the {skipped} predictions is about a proof of campaign {campaign.slug}"
        )
    evaluation = GraderEvaluation.objects.create(
        campaign=campaign,
        name=name,
        source=source,
        prediction_scale=scale,
        aggregation=aggregation,
        created_by=user,
    )
    runs: dict[int, int] = defaultdict(int)
    rows = []
    for item_id, values in matched:
        rows.append(
            GraderPrediction(
                evaluation=evaluation, item_id=item_id, run_index=runs[item_id], **values
            )
        )
        runs[item_id] += 1
    GraderPrediction.objects.bulk_create(rows, batch_size=1000)
    evaluation.runs = max(runs.values())
    evaluation.counts = {"predictions": len(rows), "proofs": len(runs), "skipped": skipped}
    evaluation.report = evaluation_report(evaluation)
    evaluation.status = JobStatus.SUCCEEDED
    evaluation.finished_at = timezone.now()
    evaluation.save()
    campaign_rater_model_fit(campaign_id=campaign.pk)  # a new grader: every label's confidence
    return evaluation


# --- The report ------------------------------------------------------------------------------


def _comparison(campaign_scale: str, prediction_scale: str) -> tuple[str, list[str]]:
    """The scale both sides are compared on, and the conversions that takes (in words)."""
    low, high = DEFAULT_CUTS
    cuts = (
        f"cut points {low} and {high} (7 -> 1, {low}-{high - 1} -> 0.5, 0-{low - 1} -> 0; a value "
        "between two integers counts as the nearest, halfway as the lower)"
    )
    notes = []
    if campaign_scale == Scale.ONE_TO_FOUR:
        notes.append("expert labels from 1-4 onto 0-7 by 2x - 1")
    if prediction_scale == "0-1" and campaign_scale != Scale.TERNARY:
        notes.append(f"expert labels from 0-7 onto 0 / 0.5 / 1 by {cuts}")
        return "0-1", notes
    if prediction_scale == Scale.ZERO_TO_SEVEN and campaign_scale == Scale.TERNARY:
        notes.append(f"predictions from 0-7 onto 0 / 0.5 / 1 by {cuts}")
        return "0-1", notes
    return ("0-1" if campaign_scale == Scale.TERNARY else "0-7"), notes


def _expert_on(value: Decimal, campaign_scale: str, comparison: str) -> float:
    """An expert label on the comparison scale. On 0-7 a label between values (a mean) keeps its
    number; on 0 / 0.5 / 1 it is read by `ternary_of` (nearest value, halfway the lower)."""
    if comparison == "0-1":
        return float(ternary_of(value, campaign_scale, DEFAULT_CUTS))
    return float(to_0_7(value, campaign_scale))


def evaluation_report(evaluation: GraderEvaluation) -> dict:
    """Every metric of the report, as plain JSON: ProofBench's per-problem averages (A.3) with
    both tau-b versions, RefGrader's pooled metrics, the score reward, the confusion matrix and
    the best-of-n curve (A.4)."""
    campaign = evaluation.campaign
    comparison, notes = _comparison(campaign.scale, evaluation.prediction_scale)
    runs: dict[int, list[float]] = defaultdict(list)
    for item_id, score in evaluation.predictions.order_by("item_id", "run_index").values_list(
        "item_id", "score"
    ):
        runs[item_id].append(score)
    labelled = Item.objects.filter(pk__in=runs.keys(), final_label__isnull=False).values_list(
        "id",
        "final_label__value",
        "proof__problem__external_id",
        "proof__sample_index",
        "proof_id",
    )
    pairs = []
    for item_id, value, problem, sample_index, proof_id in labelled:
        predicted = metrics.aggregate_runs(runs[item_id], evaluation.aggregation)
        if evaluation.prediction_scale == Scale.ZERO_TO_SEVEN and comparison == "0-1":
            predicted = float(ternary_of(predicted, "0-7", DEFAULT_CUTS))
        order = sample_index if sample_index is not None else proof_id
        pairs.append(
            metrics.Pair(problem, _expert_on(value, campaign.scale, comparison), predicted, order)
        )
    categories = [0.0, 0.5, 1.0] if comparison == "0-1" else [float(v) for v in range(8)]
    report: dict = {
        "grader": evaluation.name,
        "campaign": campaign.slug,
        "aggregation": evaluation.aggregation,
        "runs": max((len(v) for v in runs.values()), default=0),
        "comparison_scale": comparison,
        "conversions": notes,
        "labelled_proofs": len(pairs),
        "unlabelled_proofs": len(runs) - len(pairs),
        "categories": categories,
    }
    if not pairs:
        report["empty"] = "No predicted proof has a final label yet."
        return report
    expert = [p.expert for p in pairs]
    predicted = [p.predicted for p in pairs]
    macro = metrics.macro_metrics(pairs)
    pooled = metrics.pooled_metrics(expert, predicted, categories)
    if comparison == "0-1":
        reward_expert = expert
        reward_pred = [nearest(p, categories) for p in predicted]
        reward_note = (
            "on 0 / 0.5 / 1 (predictions snapped to the nearest of the three, halfway lower)"
        )
    else:
        reward_expert = [float(ternary_of(e, "0-7", DEFAULT_CUTS)) for e in expert]
        reward_pred = [float(ternary_of(p, "0-7", DEFAULT_CUTS)) for p in predicted]
        reward_note = "both sides from 0-7 onto 0 / 0.5 / 1 by cut points 5 and 7"
    report |= {
        "proofbench": {
            "problems": macro.problems,
            "mae": macro.mae,
            "rmse": macro.rmse,
            "bias": macro.bias,
            "within_1": macro.within_1 if comparison == "0-7" else None,
            "tau_b_a3": macro.tau_b_a3,
            "tau_b_a3_problems": macro.tau_b_a3_problems,
            "tau_b_standard": macro.tau_b_standard,
            "tau_b_standard_problems": macro.tau_b_standard_problems,
            "per_problem": [
                {
                    "problem": m.problem,
                    "n": m.n,
                    "mae": m.mae,
                    "rmse": m.rmse,
                    "bias": m.bias,
                    "within_1": m.within_1,
                    "tau_b_a3": m.tau_b_a3,
                    "tau_b_standard": m.tau_b_standard,
                }
                for m in macro.per_problem
            ],
        },
        "refgrader": {
            "n": pooled.n,
            "pearson": pooled.pearson,
            "spearman": pooled.spearman,
            "mae": pooled.mae,
            "rmse": pooled.rmse,
            "qwk": pooled.qwk,
        },
        "score_reward": {
            "mean": metrics.mean_score_reward(reward_expert, reward_pred),
            "note": reward_note,
        },
        "confusion_matrix": agreement.confusion_matrix(expert, predicted, categories),
        "intervals": _metric_intervals(pairs, categories, reward_expert, reward_pred),
        # A.4's baselines over the first n proofs; the random-subset average as an option
        "best_of_n": _best_of_n(pairs, "first_n"),
        "best_of_n_subsets": _best_of_n(pairs, "subsets"),
    }
    return report


METRIC_RESAMPLES = 400


def _metric_intervals(
    pairs: list[metrics.Pair],
    categories: list[float],
    reward_expert: list[float],
    reward_pred: list[float],
) -> dict[str, list[float] | None]:
    """95% percentile-bootstrap intervals of the headline metrics (ProofBench reports mean
    +- 95% CI), resampling problems: a problem's proofs move together, as they share its
    difficulty. Seeded; None where fewer than two problems or the metric is undefined in most
    resamples."""
    units: dict = defaultdict(list)
    for pair, e, p in zip(pairs, reward_expert, reward_pred, strict=True):
        units[pair.problem].append((pair, e, p))

    def flat(sample) -> list[metrics.Pair]:
        return [
            metrics.Pair((n, pair.problem), pair.expert, pair.predicted, pair.order)
            for n, unit in enumerate(sample)
            for pair, _, _ in unit
        ]

    def pooled(sample):
        flattened = flat(sample)
        return metrics.pooled_metrics(
            [p.expert for p in flattened], [p.predicted for p in flattened], categories
        )

    statistics = {
        "proofbench_mae": lambda sample: metrics.macro_metrics(flat(sample)).mae,
        "proofbench_tau_b_a3": lambda sample: metrics.macro_metrics(flat(sample)).tau_b_a3,
        "refgrader_pearson": lambda sample: pooled(sample).pearson,
        "refgrader_mae": lambda sample: pooled(sample).mae,
        "refgrader_qwk": lambda sample: pooled(sample).qwk,
        "score_reward": lambda sample: metrics.mean_score_reward(
            [e for unit in sample for _, e, _ in unit], [p for unit in sample for _, _, p in unit]
        ),
    }
    found = agreement.bootstrap_cis(
        list(units.values()), statistics, n_resamples=METRIC_RESAMPLES, seed=0
    )
    return {
        name: None if ci is None else [round(ci[0], 6), round(ci[1], 6)]
        for name, ci in found.items()
    }


def _best_of_n(pairs: list[metrics.Pair], baselines: str) -> list[dict]:
    return [
        {"n": p.n, "problems": p.problems, "grader": p.grader, "oracle": p.oracle, "mean": p.mean}
        for p in metrics.best_of_n_curve(pairs, samples=200, seed=0, baselines=baselines)
    ]


# --- Running a grader endpoint over a campaign -----------------------------------------------

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
        prediction_scale=Scale.ZERO_TO_SEVEN,
        aggregation=aggregation,
        runs=runs,
        endpoint=endpoint,
        parameters={**endpoint_parameters(endpoint), "prompt": PROMPT_VERSION},
        total=total * runs,
        created_by=user,
    )
    from exports.tasks import evaluation_run_task

    broker_require()  # 503 and nothing saved while the job queue is away
    transaction.on_commit(lambda: evaluation_run_task.delay(evaluation.pk))
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
        problem=item.proof.problem.statement,
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
            .select_related("proof__problem", "scheme")[:RUN_BATCH]
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
    failures = list(evaluation.failures.select_related("item__proof__problem"))
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
        evaluation.error = "No prediction could be made: " + _joined(
            [_failure_words(f) for f in failures]
        )
    else:
        evaluation.status = JobStatus.SUCCEEDED
        evaluation.report = evaluation_report(evaluation)
    evaluation.save()
    if done:
        campaign_rater_model_fit(campaign_id=evaluation.campaign_id)
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
    from exports.tasks import evaluation_run_task

    broker_require()  # 503 and nothing saved while the job queue is away
    transaction.on_commit(lambda: evaluation_run_task.delay(evaluation.pk))
    return evaluation
