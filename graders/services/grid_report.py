"""The report of a design-space grid: the cells ranked by each metric with 95% intervals
clustered by problem, paired tests of each cell against the best on the same proofs, the bias
probes, the alternative annotator test (per campaign and per problem type) and the ensemble
curves. Plain JSON on the grid row; the statistics are graders/trust.py's."""

from __future__ import annotations

from collections import defaultdict

from django.db.models.functions import Length

from annotation.models import Item
from annotation.scales import DEFAULT_CUTS, PredictionScale, Scale, ternary_of
from graders import metrics, trust
from graders.models import CellState, GraderGrid, GraderGridCall
from graders.services.evaluation_report import _comparison, _expert_on
from graders.services.trust_evidence import (
    Predicted,
    expert_grades,
    grader_evidence,
    incomplete_items,
    position_evidence,
    verdict,
)


def grid_report(grid: GraderGrid) -> dict:
    campaign = grid.campaign
    comparison, notes = _comparison(campaign.scale, PredictionScale.ZERO_TO_SEVEN)
    categories = (
        [0.0, 0.5, 1.0]
        if comparison == PredictionScale.ZERO_TO_ONE
        else [float(v) for v in range(8)]
    )

    def to_comparison(value: float) -> float:
        if comparison == PredictionScale.ZERO_TO_ONE:
            return float(ternary_of(value, Scale.ZERO_TO_SEVEN, DEFAULT_CUTS))
        return value

    rows = list(
        Item.objects.filter(campaign=campaign, analysis__isnull=True, final_label__isnull=False)
        .order_by("id")
        .annotate(length=Length("proof__text"))
        .values_list(
            "id",
            "final_label__value",
            "proof__problem__external_id",
            "proof__problem__topic",
            "proof__sample_index",
            "proof_id",
            "length",
            "proof__generator",
        )
    )
    index = {row[0]: n for n, row in enumerate(rows)}
    expert = [_expert_on(row[1], campaign.scale, comparison) for row in rows]
    problems = [row[2] for row in rows]
    draws = trust.cluster_resamples(trust.clusters(problems), seed=0)
    incomplete = incomplete_items(list(index))
    humans = expert_grades(list(index), lambda v: _expert_on(v, campaign.scale, comparison))

    cells = list(grid.cells.select_related("endpoint").order_by("id"))
    runs_of: dict[int, dict[int, dict[int, float]]] = defaultdict(lambda: defaultdict(dict))
    failed: dict[int, int] = defaultdict(int)
    for cell_id, item_id, run, score in GraderGridCall.objects.filter(cell__grid=grid).values_list(
        "cell_id", "item_id", "run_index", "score"
    ):
        if score is None:
            failed[cell_id] += 1
        elif item_id in index:
            runs_of[cell_id][item_id][run] = score

    report_cells, predictions = [], {}
    for cell in cells:
        entry = {
            "id": cell.pk,
            "label": cell.label,
            "endpoint": cell.endpoint.name,
            "model": cell.endpoint.model,
            "context": cell.context,
            "instruction": cell.instruction,
            "state": cell.state,
            "estimated_cost": None if cell.estimated_cost is None else float(cell.estimated_cost),
            "estimated_tokens": cell.estimated_tokens,
            "prompt_tokens": cell.prompt_tokens,
            "completion_tokens": cell.completion_tokens,
            "cost": None if cell.spend.cost is None else float(cell.spend.cost),
            "failed_calls": failed[cell.pk],
        }
        if cell.state == CellState.OVER_BUDGET:
            entry["skipped"] = (
                f"not started: estimated ${cell.estimated_cost:.2f} is over the budget of "
                f"${grid.budget:.2f}"
            )
            report_cells.append(entry)
            continue
        predicted: list[float | None] = [None] * len(rows)
        for item_id, by_run in runs_of[cell.pk].items():
            values = [by_run[r] for r in sorted(by_run)]
            predicted[index[item_id]] = to_comparison(
                metrics.aggregate_runs(values, grid.aggregation)
            )
        predictions[cell.pk] = predicted
        pairs = _pairs(rows, expert, predicted, range(len(rows)))
        entry["proofs"] = len(pairs)
        entry["metrics"] = trust.metric_values(pairs, categories)
        values = [
            trust.metric_values(_pairs(rows, expert, predicted, draw), categories) for draw in draws
        ]
        entry["intervals"] = {
            key: trust.interval_from([v[key] for v in values]) if len(set(problems)) > 1 else None
            for key in trust.METRIC_KEYS
        }
        evidence = grader_evidence(
            campaign,
            [
                Predicted(
                    item_id=rows[n][0],
                    problem=problems[n],
                    topic=rows[n][3],
                    expert=expert[n],
                    predicted=predicted[n],
                    length=rows[n][6],
                    generator=rows[n][7],
                )
                for n in range(len(rows))
                if predicted[n] is not None
            ],
            trust.model_family(cell.endpoint.model),
            humans,
            incomplete,
        )
        entry["probes"], entry["alt_test"] = evidence["probes"], evidence["alt_test"]
        if grid.runs > 1:
            labels = {
                row[0]: (row[2], expert[n], row[4] if row[4] is not None else row[5])
                for n, row in enumerate(rows)
            }
            entry["ensemble"] = trust.ensemble_curve(
                runs_of[cell.pk],
                labels,
                k=grid.runs,
                aggregation=grid.aggregation,
                categories=categories,
                to_comparison=to_comparison,
            )
        report_cells.append(entry)

    ranked = [c for c in report_cells if "metrics" in c]
    memo: dict = {}

    def values_on(cell_id: int, common: frozenset[int]) -> list[dict]:
        """The cell's metrics in every draw, on the proofs of `common` (computed once)."""
        key = (cell_id, common)
        if key not in memo:
            predicted = predictions[cell_id]
            memo[key] = [
                trust.metric_values(
                    _pairs(rows, expert, predicted, [i for i in draw if i[1] in common]),
                    categories,
                )
                for draw in draws
            ] + [trust.metric_values(_pairs(rows, expert, predicted, sorted(common)), categories)]
        return memo[key]

    rankings = {
        m.key: _ranking(m, ranked, predictions, rows, expert, values_on) for m in trust.METRICS
    }
    best = rankings["mae"]["order"][0] if rankings["mae"]["order"] else None
    position = position_evidence(campaign)
    return {
        "grid": grid.name,
        "campaign": campaign.slug,
        "runs": grid.runs,
        "aggregation": grid.aggregation,
        "budget": None if grid.budget is None else float(grid.budget),
        "comparison_scale": comparison,
        "conversions": notes,
        "labelled_proofs": len(rows),
        "problems": len(set(problems)),
        "incomplete_proofs": len(incomplete),
        "double_scored": sum(1 for item in index if sum(item in h for h in humans.values()) > 1),
        "metrics": [
            {"key": m.key, "label": m.label, "higher_is_better": m.higher_is_better}
            for m in trust.METRICS
        ],
        "cells": report_cells,
        "rankings": rankings,
        "best": best,
        "position": position,
        "verdict": verdict(next((c for c in ranked if c["id"] == best), None)),
    }


def _pairs(rows, expert, predicted, indices) -> list[metrics.Pair]:
    """The (problem, expert, prediction) pairs of the indices a cell predicted; an index drawn
    as (draw, n) keeps a problem drawn twice as two problems."""
    pairs = []
    for index in indices:
        draw, n = index if isinstance(index, tuple) else (0, index)
        if predicted[n] is None:
            continue
        row = rows[n]
        order = row[4] if row[4] is not None else row[5]
        pairs.append(metrics.Pair((draw, row[2]), expert[n], predicted[n], order))
    return pairs


def _ranking(metric, ranked, predictions, rows, expert, values_on) -> dict:
    """The cells in order of the metric (best first) and each cell's difference from the best on
    the proofs both predicted: a paired cluster bootstrap (interval, p; the same draws for both)
    and, for a pooled mean, the sign-flip permutation test by problem."""
    scored = [c for c in ranked if c["metrics"][metric.key] is not None]
    scored.sort(
        key=lambda c: (
            -c["metrics"][metric.key] if metric.higher_is_better else c["metrics"][metric.key]
        )
    )
    comparisons = []
    if scored:
        best_id = scored[0]["id"]
        best = predictions[best_id]
        for cell in scored[1:]:
            other = predictions[cell["id"]]
            both = frozenset(
                n for n in range(len(rows)) if best[n] is not None and other[n] is not None
            )
            a, b = values_on(best_id, both), values_on(cell["id"], both)
            found = [
                y[metric.key] - x[metric.key]
                for x, y in zip(a[:-1], b[:-1], strict=True)
                if x[metric.key] is not None and y[metric.key] is not None
            ]
            observed = (
                None
                if a[-1][metric.key] is None or b[-1][metric.key] is None
                else b[-1][metric.key] - a[-1][metric.key]
            )
            enough = len(found) >= (len(a) - 1) / 2 and len({rows[n][2] for n in both}) > 1
            interval = trust.percentile_interval(found) if enough else None
            entry = {
                "cell": cell["id"],
                "proofs": len(both),
                "difference": observed,
                "interval": interval,
                "p_value": trust.bootstrap_p_value(found) if enough else None,
                "p_floor": 2 / len(found) if found else None,  # a p of 0: below this
                "significant": bool(interval and (interval[0] > 0 or interval[1] < 0)),
            }
            if metric.additive and both:
                sums_a, sums_b = defaultdict(float), defaultdict(float)
                for n in both:
                    sums_a[rows[n][2]] += abs(best[n] - expert[n]) / len(both)
                    sums_b[rows[n][2]] += abs(other[n] - expert[n]) / len(both)
                keys = sorted(sums_a, key=str)
                entry["permutation"] = trust.sign_flip_test(
                    [sums_b[k] for k in keys], [sums_a[k] for k in keys]
                )
            comparisons.append(entry)
    return {"order": [c["id"] for c in scored], "comparisons": comparisons}
