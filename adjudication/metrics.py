"""Agreement figures of a campaign (a selector: reads the database, computes with
adjudication.agreement). Used by the dashboard, the API and the disagreement export.

Pairs: every two submitted judgements of one item (all pairs when more than two experts scored
it). Bootstrap intervals resample items (campaign, per week) or pairs (per pair of experts).
Bias and gold deviation compare an expert's score with the item's final label, counting only
labels that do not simply repeat one judgement (agreement, adjudication, imported).
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from itertools import combinations
from typing import TypeVar

from django.core.cache import cache
from django.db.models import Count, Max, Q, QuerySet

from adjudication import agreement
from adjudication.models import AdjudicationCase, FinalLabel, LabelSource
from adjudication.services.detection import effective_tolerance
from annotation.models import Campaign, DoubleDesign, Grade, GradeStatus, Item, SecondOpinion
from annotation.scales import comparison_scale, on_scale, scale_spec
from core.queries import of_ids

T = TypeVar("T")

REFERENCE_SOURCES = {LabelSource.AGREEMENT, LabelSource.ADJUDICATION, LabelSource.IMPORTED}
FIGURES = ("exact", "within", "mad", "kappa")


@dataclass
class Judgement:
    grade_id: int
    item_id: int
    expert_id: int
    expert: str
    score: float
    submitted_at: datetime | None
    seconds: int


@dataclass
class PairRow:
    item_id: int
    a: Judgement
    b: Judgement

    @property
    def week(self) -> date:
        moments = [j.submitted_at for j in (self.a, self.b) if j.submitted_at]
        latest = max(moments) if moments else datetime(1970, 1, 1)
        iso = latest.isocalendar()
        return date.fromisocalendar(iso.year, iso.week, 1)


@dataclass
class Figures:
    n: int
    values: dict[str, float | None]
    cis: dict[str, tuple[float, float] | None]


@dataclass
class CampaignAgreement:
    campaign: Campaign
    labels: list[float]
    tolerance: Decimal
    n_items_multi: int
    overall: Figures
    alpha: float | None
    alpha_ci: tuple[float, float] | None
    confusion: list[list[int]]
    pairs: list[dict]
    experts: list[dict]
    weeks: list[dict]
    fast: list[Judgement]
    is_calibration: bool
    distribution_max: int = field(default=1)
    weighting: str = ""  # which weighting the campaign's figures used, in words
    weighted: bool = False


def pair_figures(
    pairs: list[PairRow],
    labels: list[float],
    tolerance: Decimal,
    *,
    n_resamples: int,
    seed: int,
    weights: dict[int, float] | None = None,
) -> Figures:
    """The four pair figures, with intervals by resampling items (all pairs of a drawn item
    come along); `weights` (item id -> 1 / its probability of being double-scored): the
    design-weighted figures (adjudication.agreement.weighted_pair_figures)."""
    by_item: dict[int, list[tuple[float, float]]] = defaultdict(list)
    for pair in pairs:
        by_item[pair.item_id].append((pair.a.score, pair.b.score))
    if weights is not None:
        item_weights = [weights[item_id] for item_id in by_item]
        values = agreement.weighted_pair_figures(
            list(by_item.values()), item_weights, labels, tolerance
        )
        cis = agreement.bootstrap_pair_figures(
            list(by_item.values()),
            labels,
            tolerance,
            n_resamples=n_resamples,
            seed=seed,
            weights=item_weights,
        )
        return Figures(n=len(pairs), values=values, cis=cis)
    a, b = [p.a.score for p in pairs], [p.b.score for p in pairs]
    values = {
        "exact": agreement.exact_agreement(a, b),
        "within": agreement.within_tolerance(a, b, tolerance),
        "mad": agreement.mean_absolute_difference(a, b),
        "kappa": agreement.quadratic_weighted_kappa(a, b, labels),
    }
    cis = agreement.bootstrap_pair_figures(
        list(by_item.values()), labels, tolerance, n_resamples=n_resamples, seed=seed
    )
    return Figures(n=len(pairs), values=values, cis=cis)


def agreement_weights(item_ids: set[int]) -> tuple[dict[int, float] | None, str]:
    """The design weights of the double-scored items (1 / each one's probability of being
    double-scored, recorded on the item) and the words that say which weighting was used.
    Equal probabilities (a uniform sample): no weights, the same figures. A probability not
    known: no weights, and the words say the figures describe the double-scored items only."""
    rows = [
        # a gold item goes to every expert: it is double-scored for sure
        (pk, design, 1.0 if gold else p)
        for pk, design, p, gold in of_ids(Item.objects.all(), "id", item_ids).values_list(
            "pk", "double_design", "double_probability", "is_gold"
        )
    ]
    if not rows:
        return None, ""
    unknown = [pk for pk, _, p in rows if p is None or p <= 0]
    adaptive = sum(1 for _, design, _ in rows if design == DoubleDesign.ADAPTIVE)
    if unknown:
        return None, (
            f"Unweighted: {len(unknown)} double-scored item(s) have no known probability of "
            "being double-scored, so the figures describe the double-scored items, not "
            "necessarily the whole campaign."
        )
    probabilities = {p for _, _, p in rows}
    if len(probabilities) == 1:
        (p,) = probabilities
        return None, (
            f"Unweighted: every double-scored item had the same probability of being "
            f"double-scored ({p:.0%}, a uniform sample), so each counts once and the figures "
            "estimate the whole campaign's agreement."
        )
    return {pk: 1.0 / p for pk, _, p in rows}, (
        "Weighted by the design: each double-scored item counts 1 / its probability of being "
        f"double-scored ({adaptive} chosen adaptively, where disagreement was expected, with a "
        "uniform share kept), so the campaign's figures and alpha estimate the whole "
        "campaign's agreement. The figures per pair of experts and per week are weighted "
        "likewise, each over its own items (a pair's: the items it graded together; a week's: "
        "the pairs judged in it), so each estimates that pair's or week's agreement on the "
        "campaign's items, not only on the ones chosen where disagreement was expected. The "
        "experts' table and the confusion of scores count each judgement once (unweighted)."
    )


def _week_alpha(
    rows: list[PairRow],
    units: dict[int, list[float | None]],
    labels: list[float],
    weights: dict[int, float] | None,
) -> float | None:
    """Alpha over the items of a week's pairs, design-weighted as the campaign's is."""
    items = list(dict.fromkeys(row.item_id for row in rows))
    return agreement.krippendorff_alpha_ordinal(
        [units[item] for item in items],
        labels,
        None if weights is None else [weights.get(item, 1.0) for item in items],
    )


def campaign_judgements(campaign: Campaign) -> list[Judgement]:
    rows = (
        Grade.objects.filter(item__campaign=campaign, status=GradeStatus.SUBMITTED)
        .order_by("item_id", "id")
        .values_list(
            "id",
            "item_id",
            "expert_id",
            "expert__username",
            "score",
            "submitted_at",
            "seconds_spent",
        )
    )
    return [
        Judgement(gid, item_id, expert_id, username, float(score), at, seconds)
        for gid, item_id, expert_id, username, score, at, seconds in rows
    ]


def judgement_pairs(judgements: list[Judgement]) -> list[PairRow]:
    by_item: dict[int, list[Judgement]] = defaultdict(list)
    for judgement in judgements:
        by_item[judgement.item_id].append(judgement)
    pairs = []
    for item_id, group in by_item.items():
        ordered = sorted(group, key=lambda j: j.expert_id)
        pairs.extend(PairRow(item_id, a, b) for a, b in combinations(ordered, 2))
    return pairs


def campaign_agreement(
    campaign: Campaign, *, n_resamples: int = 400, seed: int = 0
) -> CampaignAgreement:
    spec = scale_spec(campaign.scale)
    labels = [float(v) for v in spec.values]
    tolerance = effective_tolerance(scale=campaign.scale, tolerance=campaign.tolerance)
    judgements = campaign_judgements(campaign)
    pairs = judgement_pairs(judgements)
    weights, weighting = agreement_weights({p.item_id for p in pairs})
    overall = pair_figures(
        pairs, labels, tolerance, n_resamples=n_resamples, seed=seed, weights=weights
    )

    experts = sorted({j.expert_id: j.expert for j in judgements}.items(), key=lambda e: e[1])
    by_item: dict[int, dict[int, float]] = defaultdict(dict)
    for j in judgements:
        by_item[j.item_id][j.expert_id] = j.score
    units = {
        item_id: [scores.get(eid) for eid, _ in experts] for item_id, scores in by_item.items()
    }
    unit_weights = None if weights is None else [weights.get(i, 1.0) for i in units]
    alpha = agreement.krippendorff_alpha_ordinal(list(units.values()), labels, unit_weights)
    alpha_ci = agreement.bootstrap_alpha(
        list(units.values()), labels, n_resamples=n_resamples, seed=seed, weights=unit_weights
    )

    confusion = agreement.confusion_matrix(
        [p.a.score for p in pairs] + [p.b.score for p in pairs],
        [p.b.score for p in pairs] + [p.a.score for p in pairs],
        labels,
    )

    per_pair: dict[tuple[str, str], list[PairRow]] = defaultdict(list)
    for pair in pairs:
        key = tuple(sorted((pair.a.expert, pair.b.expert)))
        per_pair[key].append(pair)
    pair_rows = [
        {
            "experts": key,
            "figures": pair_figures(
                rows, labels, tolerance, n_resamples=n_resamples, seed=seed, weights=weights
            ),
        }
        for key, rows in sorted(per_pair.items())
    ]

    weeks: dict[date, list[PairRow]] = defaultdict(list)
    for pair in pairs:
        weeks[pair.week].append(pair)
    week_rows = [
        {
            "week": week,
            "figures": pair_figures(
                rows, labels, tolerance, n_resamples=n_resamples, seed=seed, weights=weights
            ),
            "alpha": _week_alpha(rows, units, labels, weights),
        }
        for week, rows in sorted(weeks.items())
    ]

    final = dict(
        FinalLabel.objects.filter(
            item__campaign=campaign, source__in=REFERENCE_SOURCES
        ).values_list("item_id", "value")
    )
    gold_items = set(
        FinalLabel.objects.filter(item__campaign=campaign, item__is_gold=True).values_list(
            "item_id", flat=True
        )
    )
    gold_values = dict(
        of_ids(FinalLabel.objects.all(), "item", gold_items).values_list("item_id", "value")
    )
    expert_rows = []
    distribution_max = 1
    for expert_id, name in experts:
        own = [j for j in judgements if j.expert_id == expert_id]
        against = [(j.score, float(final[j.item_id])) for j in own if j.item_id in final]
        bias = agreement.bias([x for x, _ in against], [y for _, y in against])
        bias_ci = agreement.bootstrap_ci(
            against,
            lambda s: agreement.bias([x for x, _ in s], [y for _, y in s]),
            n_resamples=n_resamples,
            seed=seed,
        )
        gold = [(j.score, float(gold_values[j.item_id])) for j in own if j.item_id in gold_values]
        counts = [sum(1 for j in own if j.score == label) for label in labels]
        by_week: dict[str, list[tuple[float, float]]] = defaultdict(list)
        for j in own:
            if j.item_id in final and j.submitted_at:
                year, week, _ = j.submitted_at.isocalendar()
                by_week[f"{year}-W{week:02d}"].append((j.score, float(final[j.item_id])))
        distribution_max = max([distribution_max, *counts])
        expert_rows.append(
            {
                "name": name,
                "n": len(own),
                "bias": bias,
                "bias_ci": bias_ci,
                "bias_n": len(against),
                "gold_n": len(gold),
                "gold_bias": agreement.bias([x for x, _ in gold], [y for _, y in gold]),
                "gold_mad": agreement.mean_absolute_difference(
                    [x for x, _ in gold], [y for _, y in gold]
                ),
                "distribution": counts,
                "drift": [  # against the final labels, by ISO week of the judgement
                    {
                        "key": key,
                        "n": len(rows),
                        "bias": agreement.bias([x for x, _ in rows], [y for _, y in rows]),
                        "mae": agreement.mean_absolute_difference(
                            [x for x, _ in rows], [y for _, y in rows]
                        ),
                    }
                    for key, rows in sorted(by_week.items())
                ],
                "fast": sum(1 for j in own if j.seconds < campaign.fast_seconds),
            }
        )
    return CampaignAgreement(
        campaign=campaign,
        labels=labels,
        tolerance=tolerance,
        n_items_multi=len({p.item_id for p in pairs}),
        overall=overall,
        alpha=alpha,
        alpha_ci=alpha_ci,
        confusion=confusion,
        pairs=pair_rows,
        experts=expert_rows,
        weeks=week_rows,
        fast=[j for j in judgements if j.seconds < campaign.fast_seconds],
        is_calibration=campaign.double_share >= 1,
        distribution_max=distribution_max,
        weighting=weighting,
        weighted=weights is not None,
    )


def disagreement_rows(campaign: Campaign) -> list[dict]:
    """Items whose judgements differ at all, largest difference first (for the CSV)."""
    judgements = campaign_judgements(campaign)
    by_item: dict[int, list[Judgement]] = defaultdict(list)
    for j in judgements:
        by_item[j.item_id].append(j)
    tolerance = effective_tolerance(scale=campaign.scale, tolerance=campaign.tolerance)
    labels = {
        label.item_id: label
        for label in FinalLabel.objects.filter(item__campaign=campaign).only(
            "item_id", "value", "source"
        )
    }
    cases: QuerySet = AdjudicationCase.objects.filter(item__campaign=campaign).order_by("id")
    case_status = {c.item_id: c.status for c in cases.only("item_id", "status")}
    items = {
        item.pk: item
        for item in of_ids(campaign.items.all(), "id", by_item).select_related("proof__problem")
    }
    rows = []
    for item_id, group in by_item.items():
        if len(group) < 2:
            continue
        difference = max(j.score for j in group) - min(j.score for j in group)
        if difference == 0:
            continue
        item = items[item_id]
        label = labels.get(item_id)
        rows.append(
            {
                "item_id": item_id,
                "problem": item.proof.problem.external_id,
                "proof_id": item.proof_id,
                "generator": item.proof.generator,
                "judgements": group,
                "difference": difference,
                "beyond_tolerance": difference > float(tolerance),
                "final_value": label.value if label else None,
                "final_source": label.source if label else "",
                "case_status": case_status.get(item_id, ""),
            }
        )
    rows.sort(key=lambda r: (-r["difference"], r["item_id"]))
    return rows


def _fingerprint(campaign: Campaign) -> str:
    grades = Grade.objects.filter(item__campaign=campaign).aggregate(
        n=Count("id"), at=Max("updated_at")
    )
    labels = FinalLabel.objects.filter(item__campaign=campaign).aggregate(
        n=Count("id"), at=Max("updated_at"), gold=Count("id", filter=Q(item__is_gold=True))
    )
    return "|".join(
        str(v)
        for v in (
            grades["n"],
            grades["at"],
            labels["n"],
            labels["at"],
            labels["gold"],
            campaign.tolerance,
            campaign.fast_seconds,
            campaign.scale,
        )
    )


def campaign_figures_cached(campaign: Campaign, kind: str, compute: Callable[[Campaign], T]) -> T:
    """`compute(campaign)`, kept in the cache under `kind` until a grade, a label or a gold mark
    of the campaign changes (its fingerprint): the bootstraps behind the agreement and checkpoint
    figures take seconds on a large campaign."""
    key = (
        f"adjudication:{kind}:v2:{campaign.pk}:"  # v2: per pair and week weighted; rough flag
        + hashlib.sha256(_fingerprint(campaign).encode()).hexdigest()
    )
    found = cache.get(key)
    if found is None:
        found = compute(campaign)
        cache.set(key, found, timeout=24 * 3600)
    return found


def campaign_agreement_cached(campaign: Campaign) -> CampaignAgreement:
    """`campaign_agreement`, kept in the cache (`campaign_figures_cached`)."""
    return campaign_figures_cached(campaign, "agreement", campaign_agreement)


@dataclass
class SecondOpinionFigures:
    """The agreement page's figures on the AI second opinion: `changes` over the judgements
    whose expert saw an automatic opinion, `without_opinion` reveals that had none to show, and
    the comparison scale(s) the scores were read on."""

    changes: agreement.RevealChanges
    without_opinion: int
    scales: list[str]

    @property
    def scale_names(self) -> list[str]:
        return [scale_spec(key).name for key in self.scales]


def second_opinion_figures(campaign: Campaign) -> SecondOpinionFigures | None:
    """How experts reacted to the reveal (adjudication.agreement.reveal_changes), or None when
    no grade of the campaign was followed by one. Scores are compared on the scale of
    annotation.scales.comparison_scale; final labels count only when they do not simply repeat
    one judgement (REFERENCE_SOURCES, as for bias)."""
    found = SecondOpinion.objects.filter(
        grade__item__campaign=campaign, grade__status=GradeStatus.SUBMITTED
    ).values_list(
        "score",
        "scale",
        "score_before",
        "score_after",
        "grade__item__final_label__value",
        "grade__item__final_label__source",
    )
    rows, without, used = [], 0, set()
    for automatic, scale, before, after, final, source in found:
        if automatic is None:
            without += 1
            continue
        common = comparison_scale(campaign.scale, scale)
        used.add(common)
        rows.append(
            agreement.RevealRow(
                before=on_scale(before, campaign.scale, common),
                after=None if after is None else on_scale(after, campaign.scale, common),
                automatic=on_scale(automatic, scale, common),
                final=on_scale(final, campaign.scale, common)
                if final is not None and source in REFERENCE_SOURCES
                else None,
                own_before=before,
                own_after=after,
            )
        )
    if not rows and not without:
        return None
    return SecondOpinionFigures(
        changes=agreement.reveal_changes(rows), without_opinion=without, scales=sorted(used)
    )
