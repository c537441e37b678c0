"""Agreement of an automatic grader with the expert labels: the metrics the source papers report.

Pure Python (no Django, no numpy): every function takes plain numbers. Quadratic weighted kappa,
the confusion matrix and bias are adjudication.agreement's (one definition, shared with the
agreement pages); an expert label or a mean of runs between two categories counts for the nearest,
halfway for the lower (annotation.scales.nearest).

- ProofBench (appendix A.3): per-problem MAE, RMSE, bias (prediction - expert), within-1 and
  Kendall's tau-b, each computed within a problem and then averaged over problems. Its tau-b counts
  in T_exp every pair tied on the expert side and in T_eval every pair tied on the grader side, so
  a pair tied on both sides counts in both; this is not scipy's tau-b, which is given beside it
  (`kendall_tau_b_standard`). Problems whose tau-b denominator is zero are left out of its average.
- ProofBench (appendix A.4): the best-of-n curve, with the oracle and the subset mean beside it.
- RefGrader: pooled Pearson, Spearman, MAE, RMSE and quadratic weighted kappa.
- DeepSeekMath-V2: the score reward 1 - |s' - s| on the {0, 0.5, 1} scale.
"""

from __future__ import annotations

import itertools
import math
import random
import statistics
from collections import Counter, defaultdict
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field

from adjudication import agreement

Number = float | int


@dataclass(frozen=True)
class Pair:
    """One proof's expert label and the grader's prediction, with the problem it belongs to.

    `order` is the proof's position in the problem's original order (best-of-n breaks ties by it).
    """

    problem: Hashable
    expert: float
    predicted: float
    order: int = 0


# --- Within one problem (A.3) ----------------------------------------------------------------


@dataclass(frozen=True)
class PairCounts:
    concordant: int
    discordant: int
    tied_expert: int  # every pair with equal expert scores (also those tied on both sides)
    tied_eval: int  # every pair with equal predictions (also those tied on both sides)
    tied_both: int


def pair_counts(expert: Sequence[Number], predicted: Sequence[Number]) -> PairCounts:
    _check_lengths(expert, predicted)
    c = d = t_exp = t_eval = t_both = 0
    for i, j in itertools.combinations(range(len(expert)), 2):
        de = expert[i] - expert[j]
        dp = predicted[i] - predicted[j]
        if de == 0:
            t_exp += 1
        if dp == 0:
            t_eval += 1
        if de == 0 and dp == 0:
            t_both += 1
        if de * dp > 0:
            c += 1
        elif de * dp < 0:
            d += 1
    return PairCounts(c, d, t_exp, t_eval, t_both)


def kendall_tau_b_a3(expert: Sequence[Number], predicted: Sequence[Number]) -> float | None:
    """ProofBench A.3: (C - D) / sqrt((C + D + T_exp)(C + D + T_eval)); None when undefined."""
    p = pair_counts(expert, predicted)
    denominator = (p.concordant + p.discordant + p.tied_expert) * (
        p.concordant + p.discordant + p.tied_eval
    )
    if denominator == 0:
        return None
    return (p.concordant - p.discordant) / math.sqrt(denominator)


def kendall_tau_b_standard(expert: Sequence[Number], predicted: Sequence[Number]) -> float | None:
    """The usual tau-b (Kendall 1945, scipy.stats.kendalltau): a pair tied on both sides counts in
    neither tie term: (C - D) / sqrt((n0 - n1)(n0 - n2)). None when undefined."""
    p = pair_counts(expert, predicted)
    only_expert = p.tied_expert - p.tied_both
    only_eval = p.tied_eval - p.tied_both
    denominator = (p.concordant + p.discordant + only_eval) * (
        p.concordant + p.discordant + only_expert
    )
    if denominator == 0:
        return None
    return (p.concordant - p.discordant) / math.sqrt(denominator)


def mae(expert: Sequence[Number], predicted: Sequence[Number]) -> float:
    _check_nonempty(expert, predicted)
    return sum(abs(p - e) for e, p in zip(expert, predicted, strict=True)) / len(expert)


def rmse(expert: Sequence[Number], predicted: Sequence[Number]) -> float:
    _check_nonempty(expert, predicted)
    return math.sqrt(
        sum((p - e) ** 2 for e, p in zip(expert, predicted, strict=True)) / len(expert)
    )


def within(expert: Sequence[Number], predicted: Sequence[Number], tolerance: float = 1) -> float:
    """Share of predictions with |prediction - expert| <= tolerance (WTA<=1 for tolerance 1)."""
    _check_nonempty(expert, predicted)
    hits = sum(1 for e, p in zip(expert, predicted, strict=True) if abs(p - e) <= tolerance)
    return hits / len(expert)


@dataclass(frozen=True)
class ProblemMetrics:
    problem: Hashable
    n: int
    mae: float
    rmse: float
    bias: float
    within_1: float
    tau_b_a3: float | None
    tau_b_standard: float | None


@dataclass(frozen=True)
class MacroMetrics:
    """ProofBench's macro averages: each metric per problem, then the mean over problems."""

    problems: int
    mae: float | None
    rmse: float | None
    bias: float | None
    within_1: float | None
    tau_b_a3: float | None
    tau_b_a3_problems: int
    tau_b_standard: float | None
    tau_b_standard_problems: int
    per_problem: list[ProblemMetrics] = field(default_factory=list)


def group_by_problem(pairs: Iterable[Pair]) -> dict[Hashable, list[Pair]]:
    groups: dict[Hashable, list[Pair]] = defaultdict(list)
    for pair in pairs:
        groups[pair.problem].append(pair)
    for members in groups.values():
        members.sort(key=lambda pair: pair.order)
    return dict(groups)


def problem_metrics(problem: Hashable, pairs: Sequence[Pair]) -> ProblemMetrics:
    expert = [p.expert for p in pairs]
    predicted = [p.predicted for p in pairs]
    return ProblemMetrics(
        problem=problem,
        n=len(pairs),
        mae=mae(expert, predicted),
        rmse=rmse(expert, predicted),
        bias=agreement.bias(predicted, expert),  # prediction - expert: positive when lenient
        within_1=within(expert, predicted, 1),
        tau_b_a3=kendall_tau_b_a3(expert, predicted),
        tau_b_standard=kendall_tau_b_standard(expert, predicted),
    )


def macro_metrics(pairs: Iterable[Pair]) -> MacroMetrics:
    per_problem = [problem_metrics(k, v) for k, v in group_by_problem(pairs).items()]
    taus = [m.tau_b_a3 for m in per_problem if m.tau_b_a3 is not None]
    standard = [m.tau_b_standard for m in per_problem if m.tau_b_standard is not None]
    return MacroMetrics(
        problems=len(per_problem),
        mae=_mean_or_none([m.mae for m in per_problem]),
        rmse=_mean_or_none([m.rmse for m in per_problem]),
        bias=_mean_or_none([m.bias for m in per_problem]),
        within_1=_mean_or_none([m.within_1 for m in per_problem]),
        tau_b_a3=_mean_or_none(taus),
        tau_b_a3_problems=len(taus),
        tau_b_standard=_mean_or_none(standard),
        tau_b_standard_problems=len(standard),
        per_problem=per_problem,
    )


# --- Pooled over every proof (RefGrader) -----------------------------------------------------


@dataclass(frozen=True)
class PooledMetrics:
    n: int
    pearson: float | None
    spearman: float | None
    mae: float
    rmse: float
    qwk: float | None


def pooled_metrics(
    expert: Sequence[Number], predicted: Sequence[Number], categories: Sequence[Number]
) -> PooledMetrics:
    _check_nonempty(expert, predicted)
    return PooledMetrics(
        n=len(expert),
        pearson=agreement.pearson(expert, predicted),
        spearman=agreement.spearman(expert, predicted),
        mae=mae(expert, predicted),
        rmse=rmse(expert, predicted),
        qwk=agreement.quadratic_weighted_kappa(expert, predicted, categories),
    )


# --- DeepSeekMath-V2 -------------------------------------------------------------------------


def score_reward(expert: Number, predicted: Number) -> float:
    """R_score(s', s) = 1 - |s' - s| for scores on the {0, 0.5, 1} scale."""
    for value in (expert, predicted):
        if not 0 <= value <= 1:
            raise ValueError(f"score {value} is outside [0, 1]: convert to the 0/0.5/1 scale first")
    return 1 - abs(predicted - expert)


def mean_score_reward(expert: Sequence[Number], predicted: Sequence[Number]) -> float:
    _check_nonempty(expert, predicted)
    rewards = [score_reward(e, p) for e, p in zip(expert, predicted, strict=True)]
    return sum(rewards) / len(rewards)


# --- Best-of-n (A.4) -------------------------------------------------------------------------


BASELINES = {
    "first_n": "over the first n proofs (ProofBench A.4)",
    "subsets": "averaged over the same random subsets as the grader",
}


@dataclass(frozen=True)
class BestOfNPoint:
    n: int
    problems: int  # problems with at least n proofs
    grader: float  # mean expert score of the grader's pick
    oracle: float  # mean best expert score (among the first n, or in the grader's subsets)
    mean: float  # mean expert score (of the first n, or of the grader's subsets)


def best_of_n_curve(
    pairs: Iterable[Pair],
    *,
    samples: int = 200,
    seed: int = 0,
    max_n: int | None = None,
    baselines: str = "first_n",
) -> list[BestOfNPoint]:
    """ProofBench A.4. For each n, subsets of n of a problem's proofs drawn without replacement
    (every subset when there are at most `samples` of them, else `samples` seeded random ones);
    the grader picks its highest-scored proof, ties going to the earlier proof in the problem's
    original order. The oracle (best expert score) and the mean baseline are taken over the
    problem's first n proofs in that order (`baselines="first_n"`, the paper's definition), or
    averaged over the grader's subsets (`baselines="subsets"`). Each value is averaged over the
    problems with >= n proofs."""
    if baselines not in BASELINES:
        raise ValueError(f"baselines {baselines!r}: choose one of {', '.join(BASELINES)}")
    rng = random.Random(seed)
    groups = group_by_problem(pairs)
    largest = max((len(g) for g in groups.values()), default=0)
    top = largest if max_n is None else min(max_n, largest)
    curve = []
    for n in range(1, top + 1):
        picks, oracles, means = [], [], []
        for key in sorted(groups, key=str):
            members = groups[key]
            if len(members) < n:
                continue
            subsets = _subsets(len(members), n, samples, rng)
            pick = 0.0
            for subset in subsets:
                chosen = min(subset, key=lambda i: (-members[i].predicted, i))
                pick += members[chosen].expert
            picks.append(pick / len(subsets))
            baseline_sets = [tuple(range(n))] if baselines == "first_n" else subsets
            oracles.append(
                statistics.fmean(max(members[i].expert for i in s) for s in baseline_sets)
            )
            means.append(
                statistics.fmean(sum(members[i].expert for i in s) / n for s in baseline_sets)
            )
        curve.append(
            BestOfNPoint(
                n=n,
                problems=len(picks),
                grader=statistics.fmean(picks),
                oracle=statistics.fmean(oracles),
                mean=statistics.fmean(means),
            )
        )
    return curve


def _subsets(size: int, n: int, samples: int, rng: random.Random) -> list[tuple[int, ...]]:
    if math.comb(size, n) <= samples:
        return list(itertools.combinations(range(size), n))
    return [tuple(sorted(rng.sample(range(size), n))) for _ in range(samples)]


# --- Aggregating k runs of a grader ----------------------------------------------------------

AGGREGATIONS = ("mean", "median", "min", "max", "majority")


def aggregate_runs(values: Sequence[Number], how: str) -> float:
    """One prediction from k runs: mean, median, min, max, or majority (the most frequent value;
    a tie between several goes to the lowest of them, the cautious grade)."""
    if not values:
        raise ValueError("no runs to aggregate")
    if how == "mean":
        return statistics.fmean(values)
    if how == "median":
        return float(statistics.median(values))
    if how == "min":
        return float(min(values))
    if how == "max":
        return float(max(values))
    if how == "majority":
        counts = Counter(values)
        top = max(counts.values())
        return float(min(v for v, c in counts.items() if c == top))
    raise ValueError(f"unknown aggregation {how!r}: choose one of {', '.join(AGGREGATIONS)}")


def _mean_or_none(values: Sequence[float]) -> float | None:
    return statistics.fmean(values) if values else None


def _check_lengths(a: Sequence, b: Sequence) -> None:
    if len(a) != len(b):
        raise ValueError(f"{len(a)} expert scores but {len(b)} predictions")


def _check_nonempty(a: Sequence, b: Sequence) -> None:
    _check_lengths(a, b)
    if not a:
        raise ValueError("no scored proofs")
