"""The report of a grader evaluation against the expert labels: metrics on a common scale,
their 95% intervals (problems resampled), best-of-n curves. Used by the import of prediction files
and by endpoint runs alike."""

from __future__ import annotations

from collections import defaultdict
from decimal import Decimal

from django.db.models.functions import Length

from adjudication import agreement
from annotation.models import Item
from annotation.scales import (
    DEFAULT_CUTS,
    PredictionScale,
    Scale,
    is_range,
    nearest,
    ternary_of,
    to_0_7,
)
from annotation.scales import conversions as scale_conversions
from graders import metrics, trust
from graders.models import (
    GraderEvaluation,
)
from graders.services.trust_evidence import (
    Predicted,
    expert_grades,
    grader_evidence,
    incomplete_items,
    verdict,
)


def _comparison(campaign_scale: str, prediction_scale: str) -> tuple[str, list[str]]:
    """The scale both sides are compared on, and the conversions that takes (in words)."""
    low, high = DEFAULT_CUTS
    cuts = (
        f"cut points {low} and {high} (7 -> 1, {low}-{high - 1} -> 0.5, 0-{low - 1} -> 0; a value "
        "between two integers counts as the nearest, halfway as the lower)"
    )
    notes = []
    maps = scale_conversions(campaign_scale, DEFAULT_CUTS)
    if prediction_scale == PredictionScale.ZERO_TO_ONE and is_range(campaign_scale):
        notes.append(
            f"expert labels from {campaign_scale} onto 0 / 0.5 / 1 by {maps['to_ternary']}"
        )
        return PredictionScale.ZERO_TO_ONE, notes
    if is_range(campaign_scale):
        notes.append(f"expert labels from {campaign_scale} onto 0-7: {maps['to_0_7']}")
    if campaign_scale == Scale.ONE_TO_FOUR:
        notes.append("expert labels from 1-4 onto 0-7 by 2x - 1")
    if prediction_scale == PredictionScale.ZERO_TO_ONE and campaign_scale != Scale.TERNARY:
        notes.append(f"expert labels from 0-7 onto 0 / 0.5 / 1 by {cuts}")
        return PredictionScale.ZERO_TO_ONE, notes
    if prediction_scale == PredictionScale.ZERO_TO_SEVEN and campaign_scale == Scale.TERNARY:
        notes.append(f"predictions from 0-7 onto 0 / 0.5 / 1 by {cuts}")
        return PredictionScale.ZERO_TO_ONE, notes
    if campaign_scale == Scale.TERNARY:
        return PredictionScale.ZERO_TO_ONE, notes
    return PredictionScale.ZERO_TO_SEVEN, notes


def _expert_on(value: Decimal, campaign_scale: str, comparison: str) -> float:
    """An expert label on the comparison scale. On 0-7 a label between values (a mean) keeps its
    number; on 0 / 0.5 / 1 it is read by `ternary_of` (nearest value, halfway the lower)."""
    if comparison == PredictionScale.ZERO_TO_ONE:
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
    labelled = (
        Item.objects.filter(pk__in=runs.keys(), final_label__isnull=False)
        .annotate(length=Length("proof__text"))
        .values_list(
            "id",
            "final_label__value",
            "proof__problem__external_id",
            "proof__sample_index",
            "proof_id",
            "proof__problem__topic",
            "length",
            "proof__generator",
        )
    )
    pairs, predicted_proofs = [], []
    for item_id, value, problem, sample_index, proof_id, topic, length, generator in labelled:
        predicted = metrics.aggregate_runs(runs[item_id], evaluation.aggregation)
        if (
            evaluation.prediction_scale == PredictionScale.ZERO_TO_SEVEN
            and comparison == PredictionScale.ZERO_TO_ONE
        ):
            predicted = float(ternary_of(predicted, Scale.ZERO_TO_SEVEN, DEFAULT_CUTS))
        order = sample_index if sample_index is not None else proof_id
        expert = _expert_on(value, campaign.scale, comparison)
        pairs.append(metrics.Pair(problem, expert, predicted, order))
        predicted_proofs.append(
            Predicted(item_id, problem, topic, expert, predicted, length, generator)
        )
    categories = (
        [0.0, 0.5, 1.0]
        if comparison == PredictionScale.ZERO_TO_ONE
        else [float(v) for v in range(8)]
    )
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
    if comparison == PredictionScale.ZERO_TO_ONE:
        reward_expert = expert
        reward_pred = [nearest(p, categories) for p in predicted]
        reward_note = (
            "on 0 / 0.5 / 1 (predictions snapped to the nearest of the three, halfway lower)"
        )
    else:
        reward_expert = [float(ternary_of(e, Scale.ZERO_TO_SEVEN, DEFAULT_CUTS)) for e in expert]
        reward_pred = [float(ternary_of(p, Scale.ZERO_TO_SEVEN, DEFAULT_CUTS)) for p in predicted]
        reward_note = "both sides from 0-7 onto 0 / 0.5 / 1 by cut points 5 and 7"
    report |= {
        "proofbench": {
            "problems": macro.problems,
            "mae": macro.mae,
            "rmse": macro.rmse,
            "bias": macro.bias,
            "within_1": macro.within_1 if comparison == PredictionScale.ZERO_TO_SEVEN else None,
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
    report |= _trust(evaluation, comparison, predicted_proofs)
    return report


def _trust(evaluation: GraderEvaluation, comparison: str, predicted: list) -> dict:
    """The bias probes and the alternative annotator test of this grader (the design-space
    report gives them for each of its cells)."""
    campaign = evaluation.campaign
    item_ids = [p.item_id for p in predicted]
    family = trust.model_family(
        evaluation.endpoint.model if evaluation.endpoint_id else evaluation.name
    )
    evidence = grader_evidence(
        campaign,
        predicted,
        family,
        expert_grades(item_ids, lambda v: _expert_on(v, campaign.scale, comparison)),
        incomplete_items(item_ids),
        endpoint=evaluation.endpoint if evaluation.endpoint_id else None,
    )
    grader = {"id": evaluation.pk, "label": evaluation.name, "alt_test": evidence["alt_test"]}
    return evidence | {"verdict": verdict(grader)}


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
