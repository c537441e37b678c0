"""The score a set of checkpoint awards and applied deductions gives under a scheme.

A band scheme's score is the points of the one band picked (none picked: 0).

Order (issue 3): leaf awards -> groups ("award the larger only", [max k], additive, each at
most its own points) -> each chain ([max k] when it has one) -> shared prerequisites added
once -> the best chain -> of the deductions and caps the grader applied, the one that lowers
that subtotal most (which one depends on the subtotal) -> clamp to 0-7 -> round down to an
integer when the scheme says so (RefGrader's milestone rubric).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal

from .model import MAX_SCORE, Chain, Checkpoint, Rule, Scheme, format_points, to_decimal

ZERO = Decimal(0)


class AwardError(ValueError):
    """The awards or deductions do not fit the scheme; `problems` says why, in words."""

    def __init__(self, problems: list[str]):
        super().__init__("; ".join(problems))
        self.problems = problems


@dataclass
class ScoreBreakdown:
    """How the score was reached, for showing beside the checklist."""

    values: dict[str, Decimal] = field(default_factory=dict)  # every checkpoint id -> value
    shared: Decimal = ZERO
    chains: dict[str, Decimal] = field(default_factory=dict)  # chain id -> chain + shared
    best_chain: str | None = None
    subtotal: Decimal = ZERO
    deduction: str | None = None  # the applied deduction that counted, if any
    after_deduction: Decimal = ZERO
    score: Decimal = ZERO

    def to_dict(self) -> dict:
        return {
            "values": {key: format_points(v) for key, v in self.values.items()},
            "shared": format_points(self.shared),
            "chains": {key: format_points(v) for key, v in self.chains.items()},
            "best_chain": self.best_chain,
            "subtotal": format_points(self.subtotal),
            "deduction": self.deduction,
            "after_deduction": format_points(self.after_deduction),
            "score": format_points(self.score),
        }


def check_awards(
    scheme: Scheme, awards: Mapping[str, object], deductions: Iterable[str] = ()
) -> list[str]:
    """Problems with the awards (unknown ids, groups, values off the allowed levels) and the
    deduction ids, in words; empty when they fit the scheme."""
    if scheme.bands:
        return _check_band_awards(scheme, awards, deductions)
    problems: list[str] = []
    checkpoints = {cp.id: cp for cp in scheme.all_checkpoints()}
    zero_ids = {item.id for item in scheme.zero_credit}
    for key, raw in awards.items():
        try:
            value = to_decimal(raw)
        except ValueError:
            problems.append(f"{key}: {raw!r} is not a number of points")
            continue
        if key in zero_ids:
            if value != ZERO:
                problems.append(f"{key} is a zero-credit item: it can only be worth 0")
            continue
        cp = checkpoints.get(key)
        if cp is None:
            problems.append(f"{key} is not a checkpoint of this scheme")
        elif cp.children:
            problems.append(f"{key} ({cp.title}) is a group: award its items, not the group itself")
        elif value not in cp.award_levels():
            allowed = ", ".join(format_points(level) for level in cp.award_levels())
            problems.append(
                f"{key} ({cp.title}) cannot be awarded {format_points(value)}: "
                f"allowed values are {allowed}"
            )
    deduction_ids = {d.id for d in scheme.deductions}
    for key in deductions:
        if key not in deduction_ids:
            problems.append(f"{key} is not a deduction of this scheme")
    return problems


def _check_band_awards(
    scheme: Scheme, awards: Mapping[str, object], deductions: Iterable[str]
) -> list[str]:
    """A band scheme takes one picked band, awarded its own points, and no deductions."""
    problems: list[str] = []
    if len(awards) > 1:
        problems.append(f"pick one band, not several ({', '.join(awards)})")
    for key, raw in awards.items():
        band = scheme.band(key)
        if band is None:
            problems.append(f"{key} is not a band of this scheme")
            continue
        try:
            value = to_decimal(raw)
        except ValueError:
            problems.append(f"{key}: {raw!r} is not a number of points")
            continue
        if value != band.points:
            problems.append(
                f"the {band.name} band gives {format_points(band.points)}, "
                f"not {format_points(value)}"
            )
    problems.extend(f"{key} is not a deduction of this scheme" for key in deductions)
    return problems


def score_breakdown(
    scheme: Scheme, awards: Mapping[str, object], deductions: Iterable[str] = ()
) -> ScoreBreakdown:
    """The full computation; raises AwardError when the awards do not fit the scheme."""
    deductions = list(deductions)
    problems = check_awards(scheme, awards, deductions)
    if problems:
        raise AwardError(problems)
    given = {key: to_decimal(value) for key, value in awards.items()}
    result = ScoreBreakdown()
    if scheme.bands:
        # the picked band's points are the score
        result.values = dict(given)
        result.subtotal = result.after_deduction = result.score = next(iter(given.values()), ZERO)
        return result

    if scheme.shared:
        result.shared = _chain_value(scheme.shared, given, result.values)
    for chain in scheme.chains:
        result.chains[chain.id] = _chain_value(chain, given, result.values) + result.shared
    if result.chains:
        result.best_chain = max(result.chains, key=lambda key: result.chains[key])
        result.subtotal = result.chains[result.best_chain]
    else:
        result.subtotal = result.shared

    result.after_deduction = result.subtotal
    for key in deductions:
        lowered = scheme.deduction(key).apply(result.subtotal)
        if lowered < result.after_deduction:
            result.after_deduction = lowered
            result.deduction = key

    score = min(MAX_SCORE, max(ZERO, result.after_deduction))
    if scheme.round_down:
        score = Decimal(math.floor(score))
    result.score = score
    return result


def compute_score(
    scheme: Scheme, awards: Mapping[str, object], deductions: Iterable[str] = ()
) -> Decimal:
    """The 0-7 score. awards: checkpoint id -> points awarded (leaves only; missing ids count 0);
    deductions: ids of the deductions and caps the grader found applicable."""
    return score_breakdown(scheme, awards, deductions).score


def _chain_value(chain: Chain, given: Mapping[str, Decimal], values: dict[str, Decimal]) -> Decimal:
    total = sum((_value(item, given, values) for item in chain.items), ZERO)
    if chain.rule is Rule.MAX and chain.cap is not None:
        total = min(total, chain.cap)
    return total


def _value(cp: Checkpoint, given: Mapping[str, Decimal], values: dict[str, Decimal]) -> Decimal:
    if not cp.children:
        value = given.get(cp.id, ZERO)
    else:
        parts = [_value(child, given, values) for child in cp.children]
        if cp.rule is Rule.LARGER:
            value = max(parts)
        else:
            value = sum(parts, ZERO)
            if cp.rule is Rule.MAX and cp.cap is not None:
                value = min(value, cp.cap)
        value = min(value, cp.points)
    values[cp.id] = value
    return value
