"""Whether a grader can be trusted: the statistics of the design-space report.

Pure Python on plain numbers (no Django), like graders/metrics.py:

- cluster bootstrap intervals (problems resampled: a problem's proofs move together) and paired
  comparisons of two graders on the same proofs: a paired cluster bootstrap of the difference,
  and for the metrics that are sums over proofs (MAE, within-1, bias) an exact (or seeded Monte
  Carlo) sign-flip permutation test by problem, as `scipy.stats.permutation_test` with
  `permutation_type="samples"` computes it on per-problem sums;
- bias probes: length, position (pairwise picks in both orders), self-preference (model family)
  and over-credit of incomplete proofs, each an effect with a 95% interval;
- the alternative annotator test (Calderon, Reichart and Dror, 2025): leave one expert out,
  compare the grader's alignment with the others against that expert's, one-sided paired t-tests
  with a margin epsilon, Benjamini-Yekutieli over the experts, winning rate omega >= 0.5;
- ensembles: each metric from 1 to k runs, averaged over the subsets of runs.
"""

from __future__ import annotations

import itertools
import math
import random
import re
import statistics
from collections import defaultdict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

from graders import metrics

RESAMPLES = 400
CONFIDENCE = 0.95
EXACT_FLIPS = 12  # problems up to which the sign-flip test enumerates every flip (4,096)
MONTE_CARLO_FLIPS = 4000

# --- Metrics of a set of (problem, expert, predicted) pairs -----------------------------------


@dataclass(frozen=True)
class Metric:
    key: str
    label: str
    higher_is_better: bool
    additive: bool  # a mean over proofs: the sign-flip test applies (per-proof contributions)


METRICS = (
    Metric("mae", "MAE (per problem, averaged)", False, False),
    Metric("rmse", "RMSE (per problem, averaged)", False, False),
    Metric("within_1", "Within 1 (per problem, averaged)", True, False),
    Metric("tau_b", "Kendall τb A.3 (per problem, averaged)", True, False),
    Metric("pearson", "Pearson (pooled)", True, False),
    Metric("qwk", "Quadratic weighted κ (pooled)", True, False),
    Metric("pooled_mae", "MAE (pooled)", False, True),
)
METRIC_KEYS = tuple(m.key for m in METRICS)


def metric_values(pairs: Sequence[metrics.Pair], categories: Sequence[float]) -> dict:
    """Every ranking metric of one grader's pairs (None where undefined)."""
    if not pairs:
        return dict.fromkeys(METRIC_KEYS)
    macro = metrics.macro_metrics(pairs)
    expert = [p.expert for p in pairs]
    predicted = [p.predicted for p in pairs]
    pooled = metrics.pooled_metrics(expert, predicted, categories)
    seven = max(categories) > 1
    return {
        "mae": macro.mae,
        "rmse": macro.rmse,
        "within_1": macro.within_1 if seven else None,
        "tau_b": macro.tau_b_a3,
        "pearson": pooled.pearson,
        "qwk": pooled.qwk,
        "pooled_mae": pooled.mae,
    }


# --- Cluster bootstrap ------------------------------------------------------------------------


def clusters(keys: Sequence[Hashable]) -> list[list[int]]:
    """Indices grouped by cluster key, in order of first appearance."""
    groups: dict[Hashable, list[int]] = {}
    for index, key in enumerate(keys):
        groups.setdefault(key, []).append(index)
    return list(groups.values())


def cluster_resamples(
    groups: Sequence[Sequence[int]], *, resamples: int = RESAMPLES, seed: int = 0
) -> list[list[tuple[int, int]]]:
    """`resamples` draws of the clusters with replacement, each a list of (draw, index): the
    draw number keeps a cluster drawn twice as two clusters. One set of draws serves every cell
    of a grid, so that their differences are paired."""
    rng = random.Random(seed)
    draws = []
    for _ in range(resamples):
        chosen = [rng.randrange(len(groups)) for _ in groups]
        draws.append([(n, i) for n, g in enumerate(chosen) for i in groups[g]])
    return draws


def percentile_interval(values: Sequence[float], confidence: float = CONFIDENCE):
    """The percentile interval (linear interpolation, numpy's default), None when empty."""
    if not values:
        return None
    ordered = sorted(values)
    alpha = (1 - confidence) / 2
    return [_quantile(ordered, alpha), _quantile(ordered, 1 - alpha)]


def _quantile(ordered: Sequence[float], q: float) -> float:
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def bootstrap(
    statistic: Callable[[list[tuple[int, int]]], float | None],
    draws: Sequence[list[tuple[int, int]]],
) -> list[float] | None:
    """The statistic's 95% interval over the draws; None when fewer than two clusters or the
    statistic is undefined in over half of them."""
    if not draws or len({n for n, _ in draws[0]}) < 2:
        return None
    return interval_from([statistic(draw) for draw in draws])


def interval_from(values: Sequence[float | None]) -> list[float] | None:
    """The percentile interval of bootstrap values, None when over half are undefined."""
    found = [v for v in values if v is not None]
    return percentile_interval(found) if found and len(found) >= len(values) / 2 else None


# --- Paired comparisons ------------------------------------------------------------------------


def bootstrap_p_value(differences: Sequence[float]) -> float | None:
    """Two-sided p of "no difference" from bootstrap draws of a difference: twice the smaller
    share of draws on either side of zero (at most 1)."""
    if not differences:
        return None
    below = sum(1 for d in differences if d <= 0) / len(differences)
    above = sum(1 for d in differences if d >= 0) / len(differences)
    return min(1.0, 2 * min(below, above))


def sign_flip_test(
    a: Sequence[float], b: Sequence[float], *, seed: int = 0, exact_up_to: int = EXACT_FLIPS
) -> dict:
    """Paired permutation test of sum(a - b) over clusters, where a[c] and b[c] are two graders'
    sums over cluster c's proofs (each proof's term divided by the number of proofs, the sum is
    the difference of the pooled metric). Under "no difference" the two graders' values within a cluster are
    exchangeable: every swap (sign flip of the cluster's difference) is as likely. Exact when
    there are at most `exact_up_to` clusters, else `MONTE_CARLO_FLIPS` seeded flips. Two-sided
    p as scipy computes it: twice the smaller tail, at most 1."""
    if len(a) != len(b) or not a:
        raise ValueError("two equal, non-empty lists of cluster sums")
    diffs = [x - y for x, y in zip(a, b, strict=True)]
    observed = sum(diffs)
    if len(diffs) <= exact_up_to:
        flips = itertools.product((1, -1), repeat=len(diffs))
        exact = True
    else:
        rng = random.Random(seed)
        flips = ([rng.choice((1, -1)) for _ in diffs] for _ in range(MONTE_CARLO_FLIPS))  # noqa: S311 (statistics, not secrets)
        exact = False
    null = [sum(s * d for s, d in zip(signs, diffs, strict=True)) for signs in flips]
    tolerance = 1e-14 * max(1.0, abs(observed))
    greater = sum(1 for v in null if v >= observed - tolerance)
    less = sum(1 for v in null if v <= observed + tolerance)
    if exact:
        p = min(1.0, 2 * min(greater, less) / len(null))
    else:  # scipy's Monte Carlo p counts the observed arrangement among the draws
        p = min(1.0, 2 * min(greater + 1, less + 1) / (len(null) + 1))
    return {"statistic": observed, "p_value": p, "exact": exact, "permutations": len(null)}


# --- Bias probes --------------------------------------------------------------------------------


@dataclass(frozen=True)
class ProbeRecord:
    """One proof as the probes see it: residual = prediction - expert label."""

    problem: Hashable
    expert: float
    predicted: float
    length: int  # characters of the proof
    generator_family: str
    incomplete: bool

    @property
    def residual(self) -> float:
        return self.predicted - self.expert


def length_slope(records: Sequence[ProbeRecord]) -> float | None:
    """The slope of the residual on proof length (points per 1,000 characters) at a fixed expert
    label: ordinary least squares with one intercept per expert label (both sides demeaned
    within each label). None when length does not vary within any label."""
    by_label: dict[float, list[ProbeRecord]] = defaultdict(list)
    for record in records:
        by_label[record.expert].append(record)
    sxy = sxx = 0.0
    for group in by_label.values():
        mean_x = statistics.fmean(r.length / 1000 for r in group)
        mean_y = statistics.fmean(r.residual for r in group)
        for r in group:
            x = r.length / 1000 - mean_x
            sxy += x * (r.residual - mean_y)
            sxx += x * x
    return sxy / sxx if sxx > 1e-12 else None


def mean_difference(
    records: Sequence[ProbeRecord], inside: Callable[[ProbeRecord], bool]
) -> float | None:
    """Mean residual of the records `inside` minus that of the others; None if a side is empty."""
    yes = [r.residual for r in records if inside(r)]
    no = [r.residual for r in records if not inside(r)]
    if not yes or not no:
        return None
    return statistics.fmean(yes) - statistics.fmean(no)


def _probe(
    records: Sequence[ProbeRecord],
    statistic: Callable[[Sequence[ProbeRecord]], float | None],
    draws: Sequence[list[tuple[int, int]]],
) -> tuple[float | None, list[float] | None]:
    value = statistic(records)
    if value is None:
        return None, None
    return value, bootstrap(lambda draw: statistic([records[i] for _, i in draw]), draws)


def bias_probes(
    records: Sequence[ProbeRecord], grader_family: str, *, seed: int = 0
) -> dict[str, dict]:
    """Length, self-preference and incomplete-proof probes of one grader, each with its effect
    and a 95% cluster-bootstrap interval (problems resampled), and what it says in words."""
    draws = cluster_resamples(clusters([r.problem for r in records]), seed=seed)
    slope, slope_ci = _probe(records, length_slope, draws)
    same = sum(1 for r in records if r.generator_family == grader_family)
    own, own_ci = _probe(
        records,
        lambda rs: mean_difference(rs, lambda r: r.generator_family == grader_family),
        draws,
    )
    incomplete = [r for r in records if r.incomplete]
    over, over_ci = _probe(
        records,
        lambda rs: (
            statistics.fmean(r.residual for r in rs if r.incomplete)
            if any(r.incomplete for r in rs)
            else None
        ),
        draws,
    )
    gap, gap_ci = _probe(records, lambda rs: mean_difference(rs, lambda r: r.incomplete), draws)
    return {
        "length": {
            "effect": slope,
            "interval": slope_ci,
            "unit": "points of residual per 1,000 characters, at a fixed expert label",
            "n": len(records),
            "none": None if slope is not None else "proof lengths do not vary at any label",
        },
        "self_preference": {
            "family": grader_family,
            "effect": own,
            "interval": own_ci,
            "unit": "mean residual on its own family's proofs minus on the others'",
            "n": same,
            "none": None
            if own is not None
            else (
                f"no proof by the grader's family ({grader_family})"
                if not same
                else "every proof is by the grader's family"
            ),
        },
        "incomplete": {
            "effect": over,
            "interval": over_ci,
            "difference": gap,
            "difference_interval": gap_ci,
            "unit": "mean residual on the proofs the experts marked incomplete",
            "n": len(incomplete),
            "none": None if incomplete else "no proof marked incomplete by the experts",
        },
    }


@dataclass(frozen=True)
class PairwisePick:
    """A grader asked which of two proofs of one problem is better, once in each order:
    `forward` is its pick when proof a is shown first, `backward` when b is; each "a", "b" or
    "tie" (naming the proof, not the position)."""

    problem: Hashable
    forward: str
    backward: str


NO_PAIRWISE = (
    "No pairwise grader runs for this campaign: the position probe needs a grader asked to "
    "compare two proofs in both orders, and none has been."
)


def position_probe(picks: Sequence[PairwisePick], *, seed: int = 0) -> dict:
    """Does swapping the order change the pick? The share of pairs whose pick changes with the
    order, and the first-position preference: the share of decisive picks that went to the
    proof shown first, minus one half. Each with a 95% cluster-bootstrap interval."""
    if not picks:
        return {"effect": None, "interval": None, "n": 0, "none": NO_PAIRWISE}
    draws = cluster_resamples(clusters([p.problem for p in picks]), seed=seed)

    def flip_rate(ps: Sequence[PairwisePick]) -> float:
        return statistics.fmean(1.0 if p.forward != p.backward else 0.0 for p in ps)

    def first_share(ps: Sequence[PairwisePick]) -> float | None:
        firsts = [p.forward == "a" for p in ps if p.forward != "tie"]
        firsts += [p.backward == "b" for p in ps if p.backward != "tie"]
        return statistics.fmean(firsts) - 0.5 if firsts else None

    flips, flips_ci = _probe(picks, flip_rate, draws)
    first, first_ci = _probe(picks, first_share, draws)
    return {
        "effect": flips,
        "interval": flips_ci,
        "first_preference": first,
        "first_preference_interval": first_ci,
        "unit": "share of pairs whose pick changes when the order is swapped",
        "n": len(picks),
        "none": None,
    }


FAMILIES = (
    ("openai", ("gpt", "o1", "o3", "o4", "chatgpt", "openai", "davinci")),
    ("anthropic", ("claude", "anthropic")),
    ("google", ("gemini", "gemma", "palm", "bard")),
    ("deepseek", ("deepseek",)),
    ("qwen", ("qwen", "qwq")),
    ("xai", ("grok",)),
    ("meta", ("llama", "meta")),
    ("mistral", ("mistral", "mixtral", "magistral", "codestral")),
    ("moonshot", ("kimi", "moonshot")),
    ("zhipu", ("glm", "zhipu")),
)


def model_family(name: str) -> str:
    """A model's family from its name (`gpt-5-mini` -> openai, `models/gemini-2.5-pro` ->
    google, `deepseek-math-v2` -> deepseek); else its first word, lower-cased."""
    words = [w for w in re.split(r"[^a-z0-9]+", name.lower()) if w]
    for word in words:
        for family, prefixes in FAMILIES:
            if any(
                word.startswith(p) and (p not in ("o1", "o3", "o4") or word == p) for p in prefixes
            ):
                return family
    return words[0] if words else ""


# --- The alternative annotator test (Calderon et al., 2025) ------------------------------------

DEFAULT_EPSILON = 0.2
DEFAULT_Q = 0.05
FEW_ITEMS = 30  # below this many items an expert's test has little power (the paper asks 50-100)


def alignment(value: float, others: Sequence[float]) -> float:
    """How well one annotation represents the others on an item: minus the root mean squared
    difference (the paper's -RMSE for numeric labels)."""
    return -math.sqrt(statistics.fmean((value - o) ** 2 for o in others))


def t_cdf(t: float, df: int) -> float:
    """Student's t distribution function (through the regularized incomplete beta function)."""
    if math.isinf(t):
        return 0.0 if t < 0 else 1.0
    x = df / (df + t * t)
    tail = 0.5 * _betainc(df / 2, 0.5, x)
    return tail if t < 0 else 1 - tail


def _betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta I_x(a, b), by its continued fraction (Lentz)."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    front = math.exp(
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    if x > (a + 1) / (a + b + 2):
        return 1 - _betainc(b, a, 1 - x)
    tiny, c, d = 1e-300, 1.0, 1 - (a + b) * x / (a + 1)
    d = 1 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1 + numerator * d
            d = 1 / (d if abs(d) > tiny else tiny)
            c = 1 + numerator / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1) < 1e-15:
            break
    return front * h / a


def one_sided_t_test(differences: Sequence[float], margin: float) -> tuple[float, float]:
    """H0: mean(differences) >= margin against H1: mean < margin (scipy.stats.ttest_1samp with
    popmean=margin, alternative="less"): the t statistic and its p-value."""
    n = len(differences)
    mean = statistics.fmean(differences)
    sd = statistics.stdev(differences) if n > 1 else 0.0
    if sd == 0:
        t = -math.inf if mean < margin else (math.inf if mean > margin else 0.0)
        return t, 0.0 if mean < margin else (1.0 if mean > margin else 0.5)
    t = (mean - margin) / (sd / math.sqrt(n))
    return t, t_cdf(t, n - 1)


def benjamini_yekutieli(p_values: Sequence[float]) -> list[float]:
    """BY-adjusted p-values (scipy.stats.false_discovery_control(method="by")): reject those
    at or below q for a false discovery rate of at most q under any dependence."""
    m = len(p_values)
    if not m:
        return []
    harmonic = sum(1 / k for k in range(1, m + 1))
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    running = 1.0
    for rank in range(m, 0, -1):
        i = order[rank - 1]
        running = min(running, p_values[i] * m * harmonic / rank)
        adjusted[i] = min(1.0, running)
    return adjusted


def alt_test(
    humans: dict[Hashable, dict[Hashable, float]],
    grader: dict[Hashable, float],
    *,
    epsilon: float = DEFAULT_EPSILON,
    q: float = DEFAULT_Q,
) -> dict:
    """The alternative annotator test. For each expert j, on the items j scored together with
    at least one other expert and the grader: W^f_i = 1 when the grader's alignment with the
    other experts is at least j's, W^h_i = 1 when j's is at least the grader's (a tie gives
    both). rho_f and rho_h are their means (advantage probabilities). H0_j: rho_h - rho_f >=
    epsilon (the expert is better by the margin epsilon, the price of an expert's time) against
    H1_j: rho_h - rho_f < epsilon, by a one-sided paired t-test on d_i = W^h_i - W^f_i. The
    p-values are adjusted by Benjamini-Yekutieli over the experts; the winning rate omega is the
    share of experts whose H0 is rejected at q; the grader may stand in for an expert when omega
    >= 0.5. rho (the mean of rho_f over experts) ranks graders."""
    experts = []
    for j in sorted(humans, key=str):
        items = [
            i for i in humans[j] if i in grader and any(i in humans[k] for k in humans if k != j)
        ]
        if len(items) < 2:
            experts.append({"expert": j, "items": len(items), "tested": False})
            continue
        wf, wh = [], []
        for i in items:
            others = [humans[k][i] for k in humans if k != j and i in humans[k]]
            s_f, s_h = alignment(grader[i], others), alignment(humans[j][i], others)
            wf.append(1.0 if s_f >= s_h else 0.0)
            wh.append(1.0 if s_h >= s_f else 0.0)
        t, p = one_sided_t_test([h - f for h, f in zip(wh, wf, strict=True)], epsilon)
        experts.append(
            {
                "expert": j,
                "items": len(items),
                "tested": True,
                "rho_f": statistics.fmean(wf),
                "rho_h": statistics.fmean(wh),
                "t": None if math.isinf(t) else t,
                "p_value": p,
                "few": len(items) < FEW_ITEMS,
            }
        )
    tested = [e for e in experts if e["tested"]]
    adjusted = benjamini_yekutieli([e["p_value"] for e in tested])
    for e, p_adj in zip(tested, adjusted, strict=True):
        e["p_adjusted"] = p_adj
        e["rejected"] = p_adj <= q
    omega = sum(e["rejected"] for e in tested) / len(tested) if tested else None
    rho = statistics.fmean(e["rho_f"] for e in tested) if tested else None
    return {
        "epsilon": epsilon,
        "q": q,
        "experts": experts,
        "tested": len(tested),
        "omega": omega,
        "rho": rho,
        "passes": omega is not None and omega >= 0.5,
    }


# --- Ensembles: each metric from 1 to k runs -------------------------------------------------

MAX_SUBSETS = 20


def ensemble_curve(
    runs: dict[Hashable, dict[int, float]],
    labels: dict[Hashable, tuple[Hashable, float, int]],
    *,
    k: int,
    aggregation: str,
    categories: Sequence[float],
    to_comparison: Callable[[float], float] = float,
    seed: int = 0,
) -> list[dict]:
    """For m = 1..k: every metric of the grader that aggregates m of its k runs, averaged over
    the subsets of m run indices (all of them up to MAX_SUBSETS, else that many seeded ones).
    `runs[item][run] = score`; `labels[item] = (problem, expert, order)`. An item missing a run
    of the subset is aggregated over the runs it has."""
    rng = random.Random(seed)
    curve = []
    for m in range(1, k + 1):
        if math.comb(k, m) <= MAX_SUBSETS:
            subsets = list(itertools.combinations(range(k), m))
        else:
            subsets = [tuple(sorted(rng.sample(range(k), m))) for _ in range(MAX_SUBSETS)]
        sums: dict[str, list[float]] = defaultdict(list)
        for subset in subsets:
            pairs = []
            for item, by_run in runs.items():
                values = [by_run[r] for r in subset if r in by_run]
                if not values or item not in labels:
                    continue
                problem, expert, order = labels[item]
                predicted = to_comparison(metrics.aggregate_runs(values, aggregation))
                pairs.append(metrics.Pair(problem, expert, predicted, order))
            for key, value in metric_values(pairs, categories).items():
                if value is not None:
                    sums[key].append(value)
        curve.append(
            {
                "runs": m,
                "subsets": len(subsets),
                **{key: statistics.fmean(sums[key]) if sums[key] else None for key in METRIC_KEYS},
            }
        )
    return curve
