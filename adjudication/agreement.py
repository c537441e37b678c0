"""Agreement between experts, as pure functions (no Django, no numpy).

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
from decimal import ROUND_HALF_UP, Decimal
from itertools import combinations
from typing import TypeVar

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


def confusion_matrix(
    a: Sequence[Number | None], b: Sequence[Number | None], labels: Sequence[Number]
) -> list[list[int]]:
    """Counts: row = rater a's label, column = rater b's label, both in `labels` order."""
    index = _index(labels)
    matrix = [[0] * len(labels) for _ in labels]
    for x, y in _pairs(a, b):
        matrix[_label_index(index, x)][_label_index(index, y)] += 1
    return matrix


def quadratic_weighted_kappa(
    a: Sequence[Number | None], b: Sequence[Number | None], labels: Sequence[Number]
) -> float | None:
    """Cohen's kappa with weights (i - j)^2 / (K - 1)^2 over the label positions in `labels`.

    None when no pair exists or when chance disagreement is zero (both raters constant on the
    same label): kappa is 0/0 there.
    """
    matrix = confusion_matrix(a, b, labels)
    k = len(labels)
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


def krippendorff_alpha_ordinal(
    units: Sequence[Sequence[Number | None]], labels: Sequence[Number]
) -> float | None:
    """Krippendorff's alpha with the ordinal metric.

    `units`: one sequence per item holding every rater's score or None (missing). Units with
    fewer than two scores are not pairable and drop out. None when there is nothing pairable or
    no variation (expected disagreement zero).
    """
    index = _index(labels)
    k = len(labels)
    coincidence = [[0.0] * k for _ in range(k)]
    for unit in units:
        values = [_label_index(index, float(v)) for v in unit if v is not None]
        m = len(values)
        if m < 2:
            continue
        counts = Counter(values)
        for c, nc in counts.items():
            for d, nd in counts.items():
                pairs = nc * (nc - 1) if c == d else nc * nd
                coincidence[c][d] += pairs / (m - 1)
    marginals = [sum(row) for row in coincidence]
    n = sum(marginals)
    if n <= 1:
        return None
    cumulative = [0.0]
    for value in marginals:
        cumulative.append(cumulative[-1] + value)

    def delta(c: int, d: int) -> float:
        lo, hi = min(c, d), max(c, d)
        between = cumulative[hi + 1] - cumulative[lo]
        return (between - (marginals[lo] + marginals[hi]) / 2) ** 2

    observed = expected = 0.0
    for c in range(k):
        for d in range(k):
            if c == d:
                continue
            dist = delta(c, d)
            observed += coincidence[c][d] * dist
            expected += marginals[c] * marginals[d] * dist
    if expected == 0:
        return None
    return 1.0 - (n - 1) * observed / expected


def bias(scores: Sequence[Number | None], reference: Sequence[Number | None]) -> float | None:
    """Mean signed difference score - reference (positive: the rater scores higher)."""
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
    n = len(units)
    values: dict[str, list[float]] = {name: [] for name in statistics}
    for _ in range(n_resamples):
        sample = [units[rng.randrange(n)] for _ in range(n)]
        for name, statistic in statistics.items():
            value = statistic(sample)
            if value is not None:
                values[name].append(value)
    alpha = (1 - confidence) / 2
    out: dict[str, tuple[float, float] | None] = {}
    for name, found in values.items():
        if len(found) < n_resamples / 2:
            out[name] = None
            continue
        found.sort()
        out[name] = (_percentile(found, alpha), _percentile(found, 1 - alpha))
    return out


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

POLICIES = ("mean_floor", "lower", "mean")


def _fmt(value: Number) -> str:
    return format(Decimal(str(value)).normalize(), "f")


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
    shown = " + ".join(_fmt(v) for v in decimals)
    if policy == "mean_floor":
        candidates = [Decimal(str(v)) for v in scale_values if Decimal(str(v)) <= mean]
        if not candidates:
            raise ValueError(f"mean {mean} lies below the scale {list(scale_values)}")
        value = max(candidates)
        return (
            value,
            f"mean_floor: ({shown}) / {len(decimals)} rounded down to the scale = {_fmt(value)}",
        )
    if policy == "lower":
        value = min(decimals)
        return value, f"lower: min({', '.join(_fmt(v) for v in decimals)}) = {_fmt(value)}"
    if policy == "mean":
        value = mean.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
        return value, f"mean: ({shown}) / {len(decimals)} = {_fmt(value)}"
    raise ValueError(f"unknown label policy {policy!r}: expected one of {', '.join(POLICIES)}")
