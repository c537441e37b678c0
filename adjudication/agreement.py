"""Agreement between experts, as pure functions (no database, no numpy).

Scores arrive as numbers on one campaign scale; `labels` is always the FULL ordered label set of
that scale (e.g. 0..7), so that a category nobody used still counts in kappa's weights (Cohen
1968) and in Krippendorff's ordinal distances. A function returns None where its figure is
undefined (no data, or no variation at all to measure agreement against), never NaN.

Also here: the label policies that turn agreeing judgements into one final label (mean rounded
down to the scale, the lower score, the plain mean), and a seeded percentile bootstrap.
"""

import math
import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from itertools import combinations
from typing import NamedTuple, TypeVar

from annotation.models import LabelPolicy
from annotation.scales import nearest, shown

Number = int | float | Decimal
Pair = tuple[Number, Number]
Unit = TypeVar("Unit")


def _pairs(a: Sequence[Number | None], b: Sequence[Number | None]) -> list[tuple[float, float]]:
    if len(a) != len(b):
        raise ValueError(f"the two raters have {len(a)} and {len(b)} scores: they must be paired")
    return [
        (float(x), float(y)) for x, y in zip(a, b, strict=True) if x is not None and y is not None
    ]


def exact_agreement(a: Sequence[Number | None], b: Sequence[Number | None]) -> float | None:
    """Share of paired items on which the two scores are equal."""
    pairs = _pairs(a, b)
    if not pairs:
        return None
    return sum(1 for x, y in pairs if x == y) / len(pairs)


def within_tolerance(
    a: Sequence[Number | None], b: Sequence[Number | None], tolerance: Number
) -> float | None:
    """Share of paired items whose scores differ by at most `tolerance` (WTA<=1 at tolerance 1)."""
    pairs = _pairs(a, b)
    if not pairs:
        return None
    tol = float(tolerance) + 1e-9
    return sum(1 for x, y in pairs if abs(x - y) <= tol) / len(pairs)


def mean_absolute_difference(
    a: Sequence[Number | None], b: Sequence[Number | None]
) -> float | None:
    pairs = _pairs(a, b)
    if not pairs:
        return None
    return sum(abs(x - y) for x, y in pairs) / len(pairs)


def _index(labels: Sequence[Number]) -> dict[float, int]:
    index = {float(label): i for i, label in enumerate(labels)}
    if len(index) != len(labels):
        raise ValueError(f"labels {list(labels)} repeat a value")
    return index


def _label_index(index: dict[float, int], value: float) -> int:
    try:
        return index[value]
    except KeyError:
        raise ValueError(f"score {value:g} is not on the scale {sorted(index)}") from None


def _category(index: dict[float, int], value: float) -> int:
    """The position of a score in the label set; a value between two labels (a mean) is read as
    the nearest label, halfway as the lower (annotation.scales.nearest)."""
    found = index.get(value)
    if found is not None:
        return found
    labels = list(index)
    if not min(labels) <= value <= max(labels):
        raise ValueError(f"score {value:g} is not on the scale {sorted(index)}")
    return index[nearest(value, labels)]


def confusion_matrix(
    a: Sequence[Number | None], b: Sequence[Number | None], labels: Sequence[Number]
) -> list[list[int]]:
    """Counts: row = rater a's label, column = rater b's label, both in `labels` order. A value
    between two labels counts for the nearest (halfway: the lower); one outside them is an error.
    The one confusion matrix of the project: expert agreement and grader evaluation use it."""
    index = _index(labels)
    matrix = [[0] * len(labels) for _ in labels]
    for x, y in _pairs(a, b):
        matrix[_category(index, x)][_category(index, y)] += 1
    return matrix


def quadratic_weighted_kappa(
    a: Sequence[Number | None], b: Sequence[Number | None], labels: Sequence[Number]
) -> float | None:
    """Cohen's kappa with weights (i - j)^2 / (K - 1)^2 over the label positions in `labels`.

    None when no pair exists or when chance disagreement is zero (both raters constant on the
    same label): kappa is 0/0 there. The one kappa of the project (agreement pages, labelling
    audit, grader evaluation); the weights' constant 1 / (K - 1)^2 cancels out.
    """
    return kappa_from_matrix(confusion_matrix(a, b, labels))


def kappa_from_matrix(matrix: Sequence[Sequence[float]]) -> float | None:
    """Quadratic weighted kappa of a K x K confusion matrix (rows: rater a)."""
    k = len(matrix)
    n = sum(map(sum, matrix))
    if n == 0 or k < 2:
        return None
    rows = [sum(row) for row in matrix]
    cols = [sum(matrix[i][j] for i in range(k)) for j in range(k)]
    observed = expected = 0.0
    for i in range(k):
        for j in range(k):
            w = (i - j) ** 2
            observed += w * matrix[i][j]
            expected += w * rows[i] * cols[j] / n
    if expected == 0:
        return None
    return 1.0 - observed / expected


def pair_figures_from_matrix(
    matrix: Sequence[Sequence[float]], labels: Sequence[Number], tolerance: Number
) -> dict[str, float | None]:
    """Exact agreement, within tolerance, mean absolute difference and kappa, all from one
    confusion matrix (so a bootstrap resample only has to add matrices up)."""
    n = sum(map(sum, matrix))
    if n == 0:
        return dict.fromkeys(("exact", "within", "mad", "kappa"))
    values = [float(v) for v in labels]
    tol = float(tolerance) + 1e-9
    k = len(values)
    exact = within = total = 0.0
    for i in range(k):
        for j in range(k):
            count = matrix[i][j]
            if not count:
                continue
            diff = abs(values[i] - values[j])
            exact += count if i == j else 0
            within += count if diff <= tol else 0
            total += count * diff
    return {
        "exact": exact / n,
        "within": within / n,
        "mad": total / n,
        "kappa": kappa_from_matrix(matrix),
    }


def _unit_coincidences(values: list[int]) -> list[tuple[int, int, float]]:
    """One unit's contributions to the coincidence matrix (pairable: two values or more)."""
    m = len(values)
    if m < 2:
        return []
    counts = Counter(values)
    out = []
    for c, nc in counts.items():
        for d, nd in counts.items():
            pairs = nc * (nc - 1) if c == d else nc * nd
            if pairs:
                out.append((c, d, pairs / (m - 1)))
    return out


def alpha_from_coincidence(coincidence: Sequence[Sequence[float]]) -> float | None:
    """Ordinal Krippendorff alpha of a coincidence matrix."""
    k = len(coincidence)
    marginals = [sum(row) for row in coincidence]
    n = sum(marginals)
    if n <= 1:
        return None
    cumulative = [0.0]
    for value in marginals:
        cumulative.append(cumulative[-1] + value)
    observed = expected = 0.0
    for c in range(k):
        for d in range(k):
            if c == d:
                continue
            lo, hi = min(c, d), max(c, d)
            dist = (cumulative[hi + 1] - cumulative[lo] - (marginals[lo] + marginals[hi]) / 2) ** 2
            observed += coincidence[c][d] * dist
            expected += marginals[c] * marginals[d] * dist
    if expected == 0:
        return None
    return 1.0 - (n - 1) * observed / expected


def krippendorff_alpha_ordinal(
    units: Sequence[Sequence[Number | None]],
    labels: Sequence[Number],
    weights: Sequence[float] | None = None,
) -> float | None:
    """Krippendorff's alpha with the ordinal metric.

    `units`: one sequence per item holding every rater's score or None (missing). Units with
    fewer than two scores are not pairable and drop out. None when there is nothing pairable or
    no variation (expected disagreement zero). `weights[u]` (default 1) scales unit u's
    coincidences: 1 / its probability of being double-scored under an adaptive design, so the
    coincidence matrix estimates the whole campaign's (an integer weight k = the unit k times).
    """
    index = _index(labels)
    coincidence = [[0.0] * len(labels) for _ in labels]
    weights = [1.0] * len(units) if weights is None else weights
    for unit, weight in zip(units, weights, strict=True):
        values = [_label_index(index, float(v)) for v in unit if v is not None]
        for c, d, w in _unit_coincidences(values):
            coincidence[c][d] += w * weight
    return alpha_from_coincidence(coincidence)


def bias(scores: Sequence[Number | None], reference: Sequence[Number | None]) -> float | None:
    """Mean signed difference score - reference (positive: the rater scores higher). The one
    bias of the project: an expert against the final label, a grader against the expert."""
    pairs = _pairs(scores, reference)
    if not pairs:
        return None
    return sum(x - y for x, y in pairs) / len(pairs)


def bootstrap_ci(
    units: Sequence[Unit],
    statistic: Callable[[Sequence[Unit]], float | None],
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, float] | None:
    """Percentile bootstrap over units (items), reproducible with `seed`.

    Resamples where the statistic is undefined are left out; None when fewer than two units or
    fewer than half of the resamples give a value.
    """
    return bootstrap_cis(
        units, {"x": statistic}, n_resamples=n_resamples, confidence=confidence, seed=seed
    )["x"]


def bootstrap_cis(
    units: Sequence[Unit],
    statistics: dict[str, Callable[[Sequence[Unit]], float | None]],
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> dict[str, tuple[float, float] | None]:
    """`bootstrap_ci` for several statistics over the same resamples (one draw, many figures)."""
    if len(units) < 2:
        return dict.fromkeys(statistics)
    rng = random.Random(seed)
    values: dict[str, list[float]] = {name: [] for name in statistics}
    for _ in range(n_resamples):
        sample = rng.choices(units, k=len(units))
        for name, statistic in statistics.items():
            value = statistic(sample)
            if value is not None:
                values[name].append(value)
    return {name: _interval(found, n_resamples, confidence) for name, found in values.items()}


def _interval(found: list[float], n_resamples: int, confidence: float):
    if len(found) < n_resamples / 2:
        return None
    found.sort()
    alpha = (1 - confidence) / 2
    return _percentile(found, alpha), _percentile(found, 1 - alpha)


def weighted_pair_figures(
    groups: Sequence[Sequence[Pair]],
    weights: Sequence[float],
    labels: Sequence[Number],
    tolerance: Number,
) -> dict[str, float | None]:
    """The four pair figures with each group's (an item's) pairs counted `weights[g]` times in
    the confusion matrix: with weights 1 / the item's probability of being double-scored, a
    ratio (Hajek) estimate of the whole campaign's figure under the design that chose them.
    Integer weights give exactly the figures of the data with each item repeated."""
    index = _index(labels)
    k = len(labels)
    matrix = [[0.0] * k for _ in range(k)]
    for group, weight in zip(groups, weights, strict=True):
        for x, y in group:
            matrix[_category(index, float(x))][_category(index, float(y))] += weight
    return pair_figures_from_matrix(matrix, labels, tolerance)


def bootstrap_pair_figures(
    groups: Sequence[Sequence[Pair]],
    labels: Sequence[Number],
    tolerance: Number,
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    weights: Sequence[float] | None = None,
) -> dict[str, tuple[float, float] | None]:
    """Bootstrap intervals of the four pair figures, resampling groups (an item's pairs).
    Each resample adds up the drawn items' confusion counts: the same figures as recomputing
    from the pairs, in time linear in the items. `weights[g]`: each drawn group counts that
    much (the design weights of `weighted_pair_figures`)."""
    names = ("exact", "within", "mad", "kappa")
    if len(groups) < 2:
        return dict.fromkeys(names)
    index = _index(labels)
    k = len(labels)
    cells = [
        [_label_index(index, float(x)) * k + _label_index(index, float(y)) for x, y in group]
        for group in groups
    ]
    weighted = list(zip(cells, [1] * len(cells) if weights is None else weights, strict=True))
    rng = random.Random(seed)
    found: dict[str, list[float]] = {name: [] for name in names}
    for _ in range(n_resamples):
        flat = [0] * (k * k)
        for group, weight in rng.choices(weighted, k=len(weighted)):
            for cell in group:
                flat[cell] += weight
        matrix = [flat[i * k : (i + 1) * k] for i in range(k)]
        for name, value in pair_figures_from_matrix(matrix, labels, tolerance).items():
            if value is not None:
                found[name].append(value)
    return {name: _interval(found[name], n_resamples, confidence) for name in names}


def bootstrap_alpha(
    units: Sequence[Sequence[Number | None]],
    labels: Sequence[Number],
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    weights: Sequence[float] | None = None,
) -> tuple[float, float] | None:
    """Bootstrap interval of the ordinal alpha, resampling units, by adding up each drawn
    unit's coincidences (each times its weight, as in `krippendorff_alpha_ordinal`)."""
    if len(units) < 2:
        return None
    index = _index(labels)
    k = len(labels)
    weights = [1.0] * len(units) if weights is None else weights
    contributions = [
        [
            (c * k + d, w * weight)
            for c, d, w in _unit_coincidences(
                [_label_index(index, float(v)) for v in unit if v is not None]
            )
        ]
        for unit, weight in zip(units, weights, strict=True)
    ]
    rng = random.Random(seed)
    found = []
    for _ in range(n_resamples):
        flat = [0.0] * (k * k)
        for unit in rng.choices(contributions, k=len(contributions)):
            for cell, w in unit:
                flat[cell] += w
        value = alpha_from_coincidence([flat[i * k : (i + 1) * k] for i in range(k)])
        if value is not None:
            found.append(value)
    return _interval(found, n_resamples, confidence)


def _percentile(sorted_values: list[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default)."""
    position = q * (len(sorted_values) - 1)
    lo = math.floor(position)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (position - lo)


def item_pairs(units: Sequence[Sequence[Number | None]]) -> list[Pair]:
    """Every pair of scores given to one item (all pairs when more than two experts scored it)."""
    out: list[Pair] = []
    for unit in units:
        values = [v for v in unit if v is not None]
        out.extend(combinations(values, 2))
    return out


# --- Label policies -------------------------------------------------------------------------


def disagreement(values: Sequence[Number]) -> Decimal:
    """Size of a disagreement: highest minus lowest score."""
    decimals = [Decimal(str(v)) for v in values]
    return max(decimals) - min(decimals)


def apply_policy(
    values: Sequence[Number], policy: str, scale_values: Sequence[Number]
) -> tuple[Decimal, str]:
    """The final label the policy derives from agreeing scores, and how (recorded on the label).

    mean_floor: the mean rounded down to the nearest value on the scale; lower: the lowest
    score; mean: the plain mean (two decimals, half up), which may fall between scale values.
    """
    if not values:
        raise ValueError("a label needs at least one score")
    decimals = [Decimal(str(v)) for v in values]
    mean = sum(decimals) / len(decimals)
    terms = " + ".join(shown(v) for v in decimals)
    if policy == LabelPolicy.MEAN_FLOOR:
        candidates = [Decimal(str(v)) for v in scale_values if Decimal(str(v)) <= mean]
        if not candidates:
            raise ValueError(f"mean {mean} lies below the scale {list(scale_values)}")
        value = max(candidates)
        return (
            value,
            f"mean_floor: ({terms}) / {len(decimals)} rounded down to the scale = {shown(value)}",
        )
    if policy == LabelPolicy.LOWER:
        value = min(decimals)
        return value, f"lower: min({', '.join(shown(v) for v in decimals)}) = {shown(value)}"
    if policy == LabelPolicy.MEAN:
        value = mean.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
        return value, f"mean: ({terms}) / {len(decimals)} = {shown(value)}"
    raise ValueError(
        f"unknown label policy {policy!r}: expected one of {', '.join(LabelPolicy.values)}"
    )


# --- After the AI second opinion (issue #17): did experts change, and which way? ----------------


class RevealRow(NamedTuple):
    """One judgement whose expert saw an automatic opinion after submitting: the committed
    score, the score after the reveal (None: kept), the automatic score, and the item's final
    label (None: none to compare with), all on one comparison scale; and the committed and
    revised scores on the campaign's own scale (`own_before`, `own_after`; default: the same as
    `before`, `after`), which decide whether the expert changed and by how much: a revision
    finer than the comparison scale (0 -> 1 on 0-7, both 0 on 0 / 0.5 / 1) is still a change."""

    before: Number
    after: Number | None
    automatic: Number
    final: Number | None = None
    own_before: Number | None = None
    own_after: Number | None = None


@dataclass(frozen=True)
class RevealChanges:
    """How experts reacted to the reveal. `changed` revisions split by the automatic score into
    `toward_automatic` (nearer to it after), `away_from_automatic` (farther) and
    `level_with_automatic` (as near as before: it jumped across the automatic score, or the
    change shows only below the comparison scale's resolution); among changes of items with a
    final label, likewise `toward_final`, `away_from_final`, `level_with_final`. On the
    campaign's own scale: `raised` and `lowered` count the changes up and down, `mean_shift` is
    their mean signed size (after - before) and `mean_size` their mean absolute size."""

    revealed: int
    changed: int
    raised: int
    lowered: int
    toward_automatic: int
    away_from_automatic: int
    level_with_automatic: int
    with_final: int
    toward_final: int
    away_from_final: int
    level_with_final: int
    mean_shift: float | None
    mean_size: float | None

    @property
    def changed_share(self) -> float | None:
        return self.changed / self.revealed if self.revealed else None

    @property
    def toward_automatic_share(self) -> float | None:
        return self.toward_automatic / self.changed if self.changed else None

    @property
    def toward_final_share(self) -> float | None:
        return self.toward_final / self.with_final if self.with_final else None


def _direction(before: float, after: float, target: float) -> int:
    """1 nearer to `target` after the change, -1 farther, 0 as near."""
    gap_before, gap_after = abs(before - target), abs(after - target)
    if math.isclose(gap_before, gap_after, abs_tol=1e-9):
        return 0
    return 1 if gap_after < gap_before else -1


def reveal_changes(rows: Sequence[RevealRow]) -> RevealChanges:
    """How often experts changed their score after seeing the automatic opinion, in which
    direction (toward the automatic score or away), and whether the changes moved toward the
    final label or away from it. Whether a revision is a change, and its size, are read on the
    campaign's own scale (a revision to the same score is no change); the directions on the
    comparison scale, where a change below its resolution is "as near as before"."""
    automatic = Counter()
    final = Counter()
    shifts: list[float] = []
    for row in rows:
        own_before = float(row.before if row.own_before is None else row.own_before)
        own_after = row.after if row.own_after is None else row.own_after
        if own_after is None or math.isclose(float(own_after), own_before, abs_tol=1e-9):
            continue
        shifts.append(float(own_after) - own_before)
        before, after = float(row.before), float(row.after)
        automatic[_direction(before, after, float(row.automatic))] += 1
        if row.final is not None:
            final[_direction(before, after, float(row.final))] += 1
    return RevealChanges(
        revealed=len(rows),
        changed=len(shifts),
        raised=sum(1 for shift in shifts if shift > 0),
        lowered=sum(1 for shift in shifts if shift < 0),
        toward_automatic=automatic[1],
        away_from_automatic=automatic[-1],
        level_with_automatic=automatic[0],
        with_final=sum(final.values()),
        toward_final=final[1],
        away_from_final=final[-1],
        level_with_final=final[0],
        mean_shift=sum(shifts) / len(shifts) if shifts else None,
        mean_size=sum(abs(shift) for shift in shifts) / len(shifts) if shifts else None,
    )


def average_ranks(values: Sequence[float]) -> list[float]:
    """Ranks from 1, ties given their mean rank (scipy.stats.rankdata's 'average')."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def pearson(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Pearson's correlation; None with fewer than two points or no spread."""
    n = len(x)
    if n < 2:
        return None
    mx, my = sum(x) / n, sum(y) / n
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y, strict=True))
    sxx = sum((a - mx) ** 2 for a in x)
    syy = sum((b - my) ** 2 for b in y)
    if sxx <= 0 or syy <= 0:
        return None
    return sxy / math.sqrt(sxx * syy)


def spearman(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Spearman's rank correlation (Pearson's on average ranks, as scipy.stats.spearmanr)."""
    return pearson(average_ranks(x), average_ranks(y))
