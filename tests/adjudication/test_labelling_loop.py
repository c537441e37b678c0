"""The automated labelling loop's decision table (DeepSeekMath-V2 section 2.3), case by case."""

from decimal import Decimal

import pytest

from adjudication.verification.labelling_loop import (
    AnalysisResult,
    Outcome,
    analysis_valid,
    loop_decision,
)

D = Decimal
ONE, HALF, ZERO = D("1"), D("0.5"), D("0")


def a(score, *metas):
    return AnalysisResult(score, tuple(metas))


@pytest.mark.parametrize(
    ("metas", "m", "confirm_at", "valid"),
    [
        ((ONE, ONE, ZERO), 3, ONE, True),
        ((ONE, ZERO, ZERO), 3, ONE, False),
        ((ONE, ONE, ZERO, ZERO), 4, ONE, False),  # a tie is not a majority
        ((ONE, ONE, ONE, ZERO), 4, ONE, True),
        ((HALF, HALF, ONE), 3, ONE, False),
        ((HALF, HALF, ONE), 3, HALF, True),  # a run that accepts 0.5 as confirming
        ((ONE,), 1, ONE, True),
    ],
)
def test_analysis_valid_needs_more_than_half_confirming(metas, m, confirm_at, valid):
    assert analysis_valid(a(ZERO, *metas), m=m, confirm_at=confirm_at) is valid


@pytest.mark.parametrize(
    ("analyses", "k", "outcome", "label"),
    [
        # no analysis reports an issue: labelled 1
        ([a(ONE), a(ONE), a(ONE)], 2, Outcome.LABELLED, ONE),
        # two valid analyses at the lowest score 0, k = 2: labelled 0
        ([a(ZERO, ONE, ONE, ONE), a(ZERO, ONE, ONE, ZERO), a(ONE)], 2, Outcome.LABELLED, ZERO),
        # lowest score 0.5, both valid
        ([a(HALF, ONE, ONE, ONE), a(HALF, ONE, ONE, ONE), a(ONE)], 2, Outcome.LABELLED, HALF),
        # exactly k valid at the lowest score (ties at k count)
        ([a(ZERO, ONE, ONE, ONE), a(ZERO, ONE, ONE, ONE)], 2, Outcome.LABELLED, ZERO),
        # issues reported but none valid: labelled 1
        ([a(ZERO, ZERO, ZERO, ONE), a(HALF, ZERO, ZERO, ZERO), a(ONE)], 1, Outcome.LABELLED, ONE),
        # only one valid at the lowest score, k = 2: routed
        ([a(ZERO, ONE, ONE, ONE), a(ZERO, ZERO, ZERO, ZERO), a(ONE)], 2, Outcome.ROUTED, None),
        # the lowest score's analyses invalid, a 0.5 analysis valid: routed (not labelled 0.5)
        ([a(ZERO, ZERO, ZERO, ZERO), a(HALF, ONE, ONE, ONE)], 1, Outcome.ROUTED, None),
        # k = 1, one valid lowest among several invalid lowest
        ([a(ZERO, ONE, ONE, ZERO), a(ZERO, ZERO, ZERO, ONE)], 1, Outcome.LABELLED, ZERO),
    ],
)
def test_decision_table(analyses, k, outcome, label):
    decision = loop_decision(analyses, n=len(analyses), m=3, k=k)
    assert decision.outcome is outcome
    assert decision.label == label
    assert decision.reason


def test_a_missing_analysis_score_fails_the_proof():
    decision = loop_decision([a(None), a(ONE)], n=2, m=3, k=1)
    assert decision.outcome is Outcome.FAILED
    assert "1 of 2 analyses" in decision.reason


def test_fewer_analyses_than_n_fails():
    assert loop_decision([a(ONE)], n=3, m=3, k=1).outcome is Outcome.FAILED


def test_a_failed_meta_verification_on_an_issue_analysis_fails_rather_than_labels_one():
    decision = loop_decision([a(ZERO, ONE, None, ONE), a(ONE)], n=2, m=3, k=1)
    assert decision.outcome is Outcome.FAILED


def test_analyses_without_issues_need_no_meta_verification():
    decision = loop_decision([a(ONE), a(ONE)], n=2, m=3, k=1)
    assert decision.outcome is Outcome.LABELLED
    assert decision.valid == (False, False)


def test_confirm_at_half_changes_the_decision():
    analyses = [a(ZERO, HALF, HALF, ONE), a(ONE)]
    assert loop_decision(analyses, n=2, m=3, k=1).label == ONE
    assert loop_decision(analyses, n=2, m=3, k=1, confirm_at=HALF).label == ZERO


@pytest.mark.parametrize(
    ("analyses", "k", "reason"),
    [
        (
            [a(HALF, ONE, ONE, ONE), a(HALF, ONE, ONE, ZERO), a(ONE)],
            3,
            "2 valid analyses at the lowest score 0.5, fewer than k = 3",
        ),
        (
            [a(ZERO, ONE, ONE, ONE), a(ZERO, ZERO, ZERO, ZERO), a(HALF, ONE, ONE, ONE)],
            2,
            "1 valid analysis at the lowest score 0, fewer than k = 2 "
            "(1 valid analysis at higher scores)",
        ),
        (
            [a(ZERO, ONE, ONE, ONE), a(ZERO, ONE, ONE, ZERO), a(ONE)],
            2,
            "2 valid analyses at the lowest score 0, at least k = 2",
        ),
        ([a(D("1.0")), a(D("1.0"))], 1, "no analysis reports an issue"),
    ],
)
def test_the_reason_states_the_count_the_decision_rests_on(analyses, k, reason):
    """Scores read from the database come as 0.0 / 0.5 / 1.0: the reason prints them one way."""
    analyses = [
        AnalysisResult(
            None if x.score is None else x.score.quantize(D("0.1")),
            tuple(m.quantize(D("0.1")) for m in x.meta_scores),
        )
        for x in analyses
    ]
    assert loop_decision(analyses, n=len(analyses), m=3, k=k).reason == reason
