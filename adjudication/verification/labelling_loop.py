"""The decision of DeepSeekMath-V2's automated labelling loop (section 2.3), as plain functions.

For one proof the loop has n verifier analyses; each analysis reporting issues (score 0 or 0.5)
has m meta-verifications. An analysis is valid when more than half of its m meta-verifications
confirm it (a meta score of 1 confirms; a run may also accept 0.5). Then:

- among the analyses giving the lowest score, if at least k are valid, the proof is labelled with
  that score;
- if no analysis reporting issues is valid (no legitimate issue found in any attempt), it is
  labelled 1;
- otherwise it goes to human experts.

A failed model call decides nothing: a proof with a missing analysis score, or with a missing meta
score on an analysis reporting issues, is marked failed (to retry), never labelled by default.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from enum import StrEnum

from annotation.scales import shown

ONE = Decimal("1")


class Outcome(StrEnum):
    LABELLED = "labelled"
    ROUTED = "routed"
    FAILED = "failed"


@dataclass(frozen=True)
class AnalysisResult:
    """score: the analysis's score (None when its output broke the contract);
    meta_scores: its meta-verifications' scores (None for a failed one)."""

    score: Decimal | None
    meta_scores: Sequence[Decimal | None] = field(default_factory=tuple)

    @property
    def reports_issues(self) -> bool:
        return self.score is not None and self.score < ONE


@dataclass(frozen=True)
class Decision:
    outcome: Outcome
    label: Decimal | None
    reason: str
    valid: tuple[bool, ...] = ()


def analysis_valid(analysis: AnalysisResult, *, m: int, confirm_at: Decimal = ONE) -> bool:
    """More than half of the m meta-verifications confirm (score >= confirm_at)."""
    confirmations = sum(
        1 for score in analysis.meta_scores if score is not None and score >= confirm_at
    )
    return 2 * confirmations > m


def loop_decision(
    analyses: Sequence[AnalysisResult], *, n: int, m: int, k: int, confirm_at: Decimal = ONE
) -> Decision:
    """The label the loop gives one proof, or why it routes the proof to humans or fails."""
    if len(analyses) < n or any(analysis.score is None for analysis in analyses):
        missing = n - sum(1 for analysis in analyses if analysis.score is not None)
        return Decision(Outcome.FAILED, None, f"{missing} of {n} analyses have no score")
    issue_analyses = [analysis for analysis in analyses if analysis.reports_issues]
    if any(
        len(analysis.meta_scores) < m or any(score is None for score in analysis.meta_scores)
        for analysis in issue_analyses
    ):
        return Decision(
            Outcome.FAILED, None, "a meta-verification of an analysis reporting issues failed"
        )
    valid = tuple(
        analysis.reports_issues and analysis_valid(analysis, m=m, confirm_at=confirm_at)
        for analysis in analyses
    )
    lowest = min(analysis.score for analysis in analyses)
    at_lowest = sum(
        1 for analysis, ok in zip(analyses, valid, strict=True) if ok and analysis.score == lowest
    )
    counted = f"{_analyses(at_lowest)} at the lowest score {shown(lowest)}"
    if lowest < ONE and at_lowest >= k:
        return Decision(Outcome.LABELLED, lowest, f"{counted}, at least k = {k}", valid)
    if not any(valid):
        reason = (
            "no analysis reports an issue"
            if not issue_analyses
            else f"none of the {len(issue_analyses)} analyses reporting issues is valid"
        )
        return Decision(Outcome.LABELLED, ONE, reason, valid)
    higher = sum(valid) - at_lowest
    return Decision(
        Outcome.ROUTED,
        None,
        f"{counted}, fewer than k = {k}"
        + (f" ({_analyses(higher)} at higher scores)" if higher else ""),
        valid,
    )


def _analyses(count: int) -> str:
    return f"{count} valid analysis" if count == 1 else f"{count} valid analyses"
