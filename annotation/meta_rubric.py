"""The meta-verification rating rule (DeepSeekMath-V2, appendix A.3), as plain functions.

An expert reviewing a verifier's analysis judges only the defects the analysis claims: what it
calls correct is out of scope, so an analysis that claims no defect has no unreasonable defect
even when the proof is wrong. A claimed defect is reasonable only if it exists in the proof and
the analysis describes it accurately. The rating:

- at least one unreasonable defect: 0 when every claimed defect is unreasonable, else 0.5;
- otherwise (no defect claimed, or all reasonable): 0.5 when the analysis has an expression
  error (misquoted steps, typos, calling conclusions that depend on a wrong step "wrong" rather
  than "not rigorously demonstrated") or a score that does not fit its defects, else 1.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

ZERO, HALF, ONE = Decimal("0"), Decimal("0.5"), Decimal("1")


@dataclass(frozen=True)
class DefectJudgement:
    """The expert's judgement of one defect the analysis claims."""

    exists: bool
    accurate: bool

    @property
    def reasonable(self) -> bool:
        return self.exists and self.accurate


@dataclass(frozen=True)
class MetaRating:
    rating: Decimal
    reason: str


def meta_rating(
    defects: Sequence[DefectJudgement], *, expression_error: bool, score_error: bool
) -> MetaRating:
    """The 0 / 0.5 / 1 rating that A.3's rule gives, with the reason in words."""
    unreasonable = sum(1 for defect in defects if not defect.reasonable)
    if unreasonable:
        if unreasonable == len(defects):
            return MetaRating(ZERO, "every defect the analysis claims is unreasonable")
        return MetaRating(
            HALF, f"{unreasonable} of the {len(defects)} claimed defects are unreasonable"
        )
    found = "no defect claimed" if not defects else "every claimed defect is reasonable"
    slips = [
        name
        for name, present in (
            ("an expression error", expression_error),
            ("a wrong score", score_error),
        )
        if present
    ]
    if slips:
        return MetaRating(HALF, f"{found}, but the analysis has {' and '.join(slips)}")
    return MetaRating(ONE, f"{found}, no expression error and the score fits")
