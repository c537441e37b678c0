"""The campaign scales (`Scale`, the one place their values are written) and the explicit maps
between them (no database), and the scales a grader's predictions come on (`PredictionScale`).

- "0-7": integers 0..7 (ProofBench, MathArena).
- "0-0.5-1": DeepSeekMath-V2's verification and meta-verification scores.
- "1-4": RefGrader's scale, mapped onto 0-7 by m(x) = 2x - 1.
- any other integer range "a-b" (0 <= a < b <= 50; "0-10" Putnam's, "0-21" CMO's, the two
  offered by name): its integers, mapped onto 0-7 linearly, x -> 7 (x - a) / (b - a), and onto
  0 / 0.5 / 1 by the nearest value of the range and the cut points scaled onto it (with the
  default cuts 5 and 7: 0-10 has 10 -> 1, 8-9 -> 0.5, 0-7 -> 0; 0-21 has 21 -> 1, 15-20 -> 0.5,
  0-14 -> 0). `conversions` states both maps of a scale in words, for manifests, cards and
  reports.

`to_0_7(value, scale)` maps a value of any scale onto 0-7 where a map exists (0-0.5-1 has none:
it is a different judgement, not a coarser 0-7); `to_ternary(value_0_7, cuts=(5, 7))` maps 0-7
onto 0 / 0.5 / 1 by two cut points (default 7 -> 1, 5-6 -> 0.5, 0-4 -> 0).

A judgement is always a value of its scale (`check_value`). A final label may fall between two
values (the mean policy: 3.5 on 0-7, 1.5 on 1-4, 0.75 on 0 / 0.5 / 1); `check_label` accepts any
number within the scale's range. The rule for such labels, everywhere:
- a linear map keeps the number (1.5 on 1-4 -> 2.0 on 0-7, 2.5 -> 4.0);
- where a scale value is needed (a cut point, a category of a confusion matrix or kappa, the
  0 / 0.5 / 1 score), the label is read as the nearest scale value, and halfway between two as the
  lower (`nearest`): a label counts for a value only when the experts' mean came nearer to it
  than to the value below. So 6.5 -> 6 -> 0.5, 4.5 -> 4 -> 0, 6.67 -> 7 -> 1, 0.75 -> 0.5.
- numeric statistics (MAE, bias, within-1, correlations) use the number itself.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache
from typing import TypeVar

from django.db.models import TextChoices

from core.values import shown  # noqa: F401 (scales.shown: the one way a score is printed)

N = TypeVar("N", Decimal, float)


class Scale(TextChoices):
    """The scales offered by name; any other integer range "a-b" is a scale too (range_spec)."""

    ZERO_TO_SEVEN = "0-7", "0-7 integers"
    TERNARY = "0-0.5-1", "0 / 0.5 / 1"
    ONE_TO_FOUR = "1-4", "1-4 (maps to 0-7 by 2x-1)"
    ZERO_TO_TEN = "0-10", "0-10 integers (Putnam; maps to 0-7 by 7x/10)"
    ZERO_TO_TWENTY_ONE = "0-21", "0-21 integers (CMO; maps to 0-7 by x/3)"


RANGE_RE = re.compile(r"^(\d{1,3})-(\d{1,3})$")
RANGE_MAX = 50  # the widest range a campaign may use (0-50: the scores fit the tables' columns)


class PredictionScale(TextChoices):
    """The scale of a grader's predictions: 0-7 (a campaign's), or a probability of a correct
    proof on 0-1 (compared on 0 / 0.5 / 1)."""

    ZERO_TO_SEVEN = Scale.ZERO_TO_SEVEN.value, "0-7"
    ZERO_TO_ONE = "0-1", "0-1"


# The cut points that map 0-7 onto 0 / 0.5 / 1 unless a caller chooses its own (an export's
# filters, the grader evaluation report): 7 -> 1, 5-6 -> 0.5, 0-4 -> 0.
DEFAULT_CUTS = (5, 7)

# A prediction's scale as one of ours: a 0-1 prediction (a DeepSeekMath-V2 output's average
# rating, a mean of 0 / 0.5 / 1 verifier scores) is read on 0 / 0.5 / 1, between values too.
PREDICTION_ON_SCALE = {
    PredictionScale.ZERO_TO_SEVEN: Scale.ZERO_TO_SEVEN,
    PredictionScale.ZERO_TO_ONE: Scale.TERNARY,
}


@dataclass(frozen=True)
class ScaleSpec:
    key: str
    name: str
    values: tuple[Decimal, ...]
    labels: dict[Decimal, str]

    @property
    def max(self) -> Decimal:
        return self.values[-1]

    @property
    def min(self) -> Decimal:
        return self.values[0]

    def contains(self, value: Decimal) -> bool:
        return value in self.values


def _d(value: str | int) -> Decimal:
    return Decimal(str(value))


SCALES: dict[str, ScaleSpec] = {
    Scale.ZERO_TO_SEVEN: ScaleSpec(
        key=Scale.ZERO_TO_SEVEN,
        name="0-7 integers",
        values=tuple(_d(v) for v in range(8)),
        labels={
            _d(7): "Complete and correct proof.",
            _d(6): "Nearly complete; only negligible issues.",
            _d(5): "Mostly correct; one small but real flaw.",
            _d(4): "Substantial progress; the proof is incomplete.",
            _d(3): "Partial progress.",
            _d(2): "Minor progress.",
            _d(1): "A trace of understanding.",
            _d(0): "No progress, or invalid.",
        },
    ),
    Scale.TERNARY: ScaleSpec(
        key=Scale.TERNARY,
        name="0 / 0.5 / 1",
        values=(_d(0), _d("0.5"), _d(1)),
        labels={
            _d(1): "Completely correct: every step carried out properly and shown clearly.",
            _d("0.5"): "Correct in the main, with some details left out or minor errors.",
            _d(0): "Does not really solve the problem asked, or has a fatal error or a serious "
            "omission.",
        },
    ),
    Scale.ONE_TO_FOUR: ScaleSpec(
        key=Scale.ONE_TO_FOUR,
        name="1-4 (RefGrader)",
        values=tuple(_d(v) for v in range(1, 5)),
        labels={
            _d(4): "Correct: proves every required fact and statement (7 on 0-7).",
            _d(3): "Almost correct: proves non-trivial parts but omits one non-trivial part "
            "(5 on 0-7).",
            _d(2): "Some correct information: a few non-trivial facts, no coherent proof "
            "(3 on 0-7).",
            _d(1): "Incorrect: nothing useful beyond restating the problem (1 on 0-7).",
        },
    ),
}


# DeepSeekMath-V2's rule on the 0 / 0.5 / 1 scale, in our words.
CITATION_RULE = (
    "Citing a paper or a known result does not replace proving it: a proof that leans on a cited "
    "result without also giving a complete, correct proof of it cannot score 1; grade it by the "
    "other criteria as if the cited step were missing."
)


class ScaleError(ValueError):
    """A value that is not on the scale, or a scale without the requested map."""


def range_bounds(scale: str) -> tuple[int, int] | None:
    """(a, b) of an integer-range scale "a-b" other than 0-7 and 1-4 (which have maps of their
    own), else None."""
    match = RANGE_RE.match(scale or "")
    if not match or scale in SCALES:
        return None
    low, high = int(match.group(1)), int(match.group(2))
    if not 0 <= low < high <= RANGE_MAX:
        return None
    return low, high


def is_range(scale: str) -> bool:
    return range_bounds(scale) is not None


@lru_cache(maxsize=256)
def _range_spec(scale: str) -> ScaleSpec:
    low, high = range_bounds(scale)
    labels = {}
    for value in range(low, high + 1):
        on_7 = shown((Decimal(7 * (value - low)) / (high - low)).quantize(Decimal("0.01")))
        words = {low: "No progress, or invalid", high: "Complete and correct proof"}.get(value)
        labels[_d(value)] = f"{words} ({on_7} on 0-7)." if words else f"{on_7} on 0-7."
    return ScaleSpec(
        key=scale,
        name=f"{low}-{high} integers",
        values=tuple(_d(v) for v in range(low, high + 1)),
        labels=labels,
    )


def scale_spec(scale: str) -> ScaleSpec:
    found = SCALES.get(scale)
    if found is not None:
        return found
    if is_range(scale):
        return _range_spec(scale)
    raise ScaleError(
        f"unknown scale {scale!r}: use one of {', '.join(SCALES)} or an integer range such as "
        f"0-10 (from 0 up to {RANGE_MAX})"
    )


def is_scale(scale: str) -> bool:
    return scale in SCALES or is_range(scale)


def floor_to_scale(value: Decimal, scale: str) -> Decimal:
    """The largest value of the scale not above `value` (the scale's lowest when all are): the
    final score a computed checklist total gives (6.5 on 0-7 -> 6)."""
    spec = scale_spec(scale)
    return max((v for v in spec.values if v <= value), default=spec.min)


def check_value(value: Decimal | int | str, scale: str) -> Decimal:
    """The value as a Decimal, or ScaleError naming the allowed values."""
    spec = scale_spec(scale)
    number = _d(value) if not isinstance(value, Decimal) else value
    if not spec.contains(number):
        allowed = ", ".join(format(v.normalize(), "f") for v in spec.values)
        raise ScaleError(f"{value} is not on the {spec.name} scale: allowed values are {allowed}")
    return number


def check_label(value: Decimal | int | float | str, scale: str) -> Decimal:
    """A final label as a Decimal: any number within the scale's range (a mean may fall between
    two values), or ScaleError naming the range."""
    spec = scale_spec(scale)
    number = value if isinstance(value, Decimal) else _d(value)
    if not number.is_finite() or not spec.min <= number <= spec.max:
        raise ScaleError(
            f"{value} is outside the {spec.name} scale "
            f"({format(spec.min.normalize(), 'f')} to {format(spec.max.normalize(), 'f')})"
        )
    return number


def nearest(value: N, values: Sequence[N]) -> N:
    """The value of `values` nearest to `value`; halfway between two, the lower one."""
    return min(values, key=lambda candidate: (abs(candidate - value), candidate))


def to_0_7(value: Decimal | int | float | str, scale: str) -> Decimal:
    """A label of `scale` on 0-7: 0-7 unchanged, 1-4 by 2x - 1 (between values too: 1.5 -> 2),
    an integer range a-b by 7 (x - a) / (b - a) (0-10: 8 -> 5.6; 0-21: 9 -> 3). 0/0.5/1 has no
    0-7 map."""
    number = check_label(value, scale)
    if scale == Scale.ZERO_TO_SEVEN:
        return number
    if scale == Scale.ONE_TO_FOUR:
        return 2 * number - 1
    bounds = range_bounds(scale)
    if bounds is not None:
        low, high = bounds
        return 7 * (number - low) / (high - low)
    raise ScaleError("the 0 / 0.5 / 1 scale has no map onto 0-7")


def native_cuts(scale: str, cuts: tuple[int, int] = DEFAULT_CUTS) -> tuple[Decimal, Decimal]:
    """The cut points of 0-7 on an integer-range scale: the least values of the range at or
    above them once on 0-7 (0-10 with 5 and 7: 8 and 10; 0-21: 15 and 21)."""
    values = scale_spec(scale).values
    found = []
    for cut in cuts:
        at_or_above = [v for v in values if to_0_7(v, scale) >= cut]
        found.append(at_or_above[0] if at_or_above else values[-1] + 1)
    return found[0], found[1]


def to_ternary(
    value_0_7: Decimal | int | float | str, cuts: tuple[int, int] = DEFAULT_CUTS
) -> Decimal:
    """0-7 onto 0 / 0.5 / 1: at least cuts[1] -> 1, at least cuts[0] -> 0.5, else 0. A value
    between two integers is read as the nearest, halfway as the lower (6.5 -> 6 -> 0.5)."""
    number = nearest(
        check_label(value_0_7, Scale.ZERO_TO_SEVEN), SCALES[Scale.ZERO_TO_SEVEN].values
    )
    low, high = cuts
    if number >= high:
        return Decimal(1)
    if number >= low:
        return Decimal("0.5")
    return Decimal(0)


@lru_cache(maxsize=4096)
def ternary_of(
    value: Decimal | int | float | str, scale: str, cuts: tuple[int, int] = DEFAULT_CUTS
) -> Decimal:
    """A label of any scale on 0 / 0.5 / 1: that scale's own labels by `nearest`, the others
    through 0-7 and the cut points. Remembered: a dataset's labels take a few values, and the
    nearest-value search was a quarter of a D_v export's CPU."""
    if scale == Scale.TERNARY:
        return nearest(check_label(value, scale), SCALES[scale].values)
    if is_range(scale):
        number = nearest(check_label(value, scale), scale_spec(scale).values)
        low, high = native_cuts(scale, cuts)
        return Decimal(1) if number >= high else Decimal("0.5") if number >= low else Decimal(0)
    return to_ternary(to_0_7(value, scale), cuts)


def _spans(values: Sequence[Decimal]) -> str:
    if not values:
        return "none"
    first, last = shown(values[0]), shown(values[-1])
    return first if first == last else f"{first}-{last}"


def ternary_table(scale: str, cuts: tuple[int, int] = DEFAULT_CUTS) -> str:
    """Which values of a scale go to 1, 0.5 and 0, in words ("10 -> 1, 8-9 -> 0.5, 0-7 -> 0")."""
    values = scale_spec(scale).values
    by = {
        score: [v for v in values if ternary_of(v, scale, cuts) == score]
        for score in (Decimal(1), Decimal("0.5"), Decimal(0))
    }
    return ", ".join(f"{_spans(found)} -> {shown(score)}" for score, found in by.items() if found)


def conversions(scale: str, cuts: tuple[int, int] = DEFAULT_CUTS) -> dict[str, str]:
    """The scale's maps onto 0-7 and onto 0 / 0.5 / 1, in words: what every export's manifest
    and card and the grader report state ({"to_0_7": ..., "to_ternary": ...}; a map a scale
    lacks says so)."""
    between = "a label between two values counts as the nearest, halfway as the lower"
    low, high = cuts
    if scale == Scale.TERNARY:
        return {
            "to_0_7": "none: 0 / 0.5 / 1 is a different judgement, not a coarser 0-7",
            "to_ternary": f"itself ({between})",
        }
    table = ternary_table(scale, cuts)
    if scale == Scale.ZERO_TO_SEVEN:
        return {
            "to_0_7": "itself",
            "to_ternary": f"by cut points {low} and {high}: {table} ({between})",
        }
    if scale == Scale.ONE_TO_FOUR:
        return {
            "to_0_7": "x -> 2x - 1 (a label between two values too: 1.5 -> 2)",
            "to_ternary": f"through 0-7 (2x - 1), then cut points {low} and {high}: {table} "
            f"({between} of 0-7)",
        }
    a, b = range_bounds(scale)
    shift = f"7 (x - {a})" if a else "7x"
    native_low, native_high = native_cuts(scale, cuts)
    return {
        "to_0_7": f"x -> {shift} / {b - a}, linear, the number kept "
        f"({shown(Decimal(b))} -> 7, {shown(Decimal(a))} -> 0)",
        "to_ternary": f"cut points {low} and {high} of 0-7 on {scale} "
        f"({shown(native_low)} and {shown(native_high)}): {table} ({between} of {scale})",
    }


def comparison_scale(expert_scale: str, other_scale: str) -> str:
    """The scale an expert's judgement and another judgement of the proof (an automatic
    grader's, on `other_scale`) are compared on: the expert's own when both share it; 0 / 0.5
    / 1 when either is on it (0-7 and 1-4 go onto it through 0-7 and the cut points, never the
    other way: 0 / 0.5 / 1 has no 0-7 map); else 0-7 (1-4 by 2x - 1)."""
    if expert_scale == other_scale:
        return expert_scale
    if Scale.TERNARY in (expert_scale, other_scale):
        return Scale.TERNARY
    return Scale.ZERO_TO_SEVEN


def on_scale(
    value: Decimal | int | float | str, scale: str, onto: str, cuts: tuple[int, int] = DEFAULT_CUTS
) -> Decimal:
    """`value` of `scale` on the comparison scale `onto` (see comparison_scale): unchanged on its
    own scale, 0 / 0.5 / 1 by `ternary_of` (with `cuts`), 0-7 by `to_0_7`."""
    if scale == onto:
        return value if isinstance(value, Decimal) else _d(value)
    if onto == Scale.TERNARY:
        return ternary_of(value, scale, cuts)
    return to_0_7(value, scale)


def prediction_on_unit(score: float, prediction_scale: str) -> float:
    """A grader prediction put on 0-1 ("0-7" divided by 7; "0-1" as it is)."""
    return score / 7.0 if prediction_scale == PredictionScale.ZERO_TO_SEVEN else float(score)
