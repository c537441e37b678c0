"""Importing an automatic grader's predictions for a campaign.

Predictions come from a ProofGrader-style JSONL file (`{problem_id, generator, score,
assessment, errors}`, optionally `response_number`; several lines for one proof are k runs) or
from DeepSeekMath-V2's output files (`problem_idx`, `model_prediction.proof`,
`model_prediction.average_automatic_rating` in [0, 1]). Lines about proofs that are not in the
campaign are counted and skipped; a malformed line rejects the whole file with its line number.
Running a grader through an endpoint and the report are in graders/services/evaluations.py.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable

import orjson
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from annotation.models import Campaign, Item
from annotation.scales import PredictionScale
from graders import metrics
from graders.models import (
    GraderEvaluation,
    GraderPrediction,
    JobStatus,
    PredictionSource,
)
from graders.services.evaluation_report import evaluation_report
from graders.signals import grader_evaluated
from problems.importers.base import escaped, unstorable_fields

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
        if bad := next(unstorable_fields(record), None):
            raise PredictionError(f"line {number}: field {escaped(bad[0])!r} {bad[1]}")
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
        raise PredictionError(errors_joined(errors))
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
        raise PredictionError(errors_joined(errors))
    return matched, skipped


def errors_joined(errors: list[str]) -> str:
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
        scale = PredictionScale.ZERO_TO_SEVEN
    elif source == PredictionSource.DEEPSEEK_OUTPUTS:
        matched, skipped = _deepseek(data, campaign)
        scale = PredictionScale.ZERO_TO_ONE
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
    # a new grader: every label's confidence is fitted again (estimation's receiver)
    grader_evaluated.send(
        sender=GraderEvaluation, evaluation_id=evaluation.pk, campaign_id=campaign.pk
    )
    return evaluation


# --- The report ------------------------------------------------------------------------------
