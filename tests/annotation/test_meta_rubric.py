"""A.3's rating rule, checked exhaustively over every defect list of up to four defects (1,364
combinations in one test: a table this size is a loop, not 1,364 test cases)."""

import itertools
from decimal import Decimal

from annotation.meta_rubric import DefectJudgement, meta_rating

JUDGEMENTS = [
    DefectJudgement(exists, accurate) for exists in (True, False) for accurate in (True, False)
]


def expected(defects, expression_error, score_error):
    """The rule written out independently, as the appendix states it."""
    reasonable = [d.exists and d.accurate for d in defects]
    if not all(reasonable):
        return Decimal("0") if not any(reasonable) else Decimal("0.5")
    return Decimal("0.5") if expression_error or score_error else Decimal("1")


CASES = [
    (defects, expression_error, score_error)
    for size in range(5)
    for defects in itertools.product(JUDGEMENTS, repeat=size)
    for expression_error in (False, True)
    for score_error in (False, True)
]


def test_rule_over_every_combination():
    assert len(CASES) == 1364
    for defects, expression_error, score_error in CASES:
        result = meta_rating(defects, expression_error=expression_error, score_error=score_error)
        wanted = expected(defects, expression_error, score_error)
        assert result.rating == wanted, (defects, expression_error, score_error, result)
        assert result.reason


def test_a_defect_is_reasonable_only_if_it_exists_and_is_described_accurately():
    assert DefectJudgement(True, True).reasonable
    assert not DefectJudgement(True, False).reasonable
    assert not DefectJudgement(False, True).reasonable


def test_no_claimed_defect_is_never_unreasonable():
    assert meta_rating([], expression_error=False, score_error=False).rating == Decimal("1")


def test_unreasonable_defects_ignore_expression_and_score():
    mixed = [DefectJudgement(True, True), DefectJudgement(False, False)]
    assert meta_rating(mixed, expression_error=False, score_error=False).rating == Decimal("0.5")
    assert meta_rating(mixed, expression_error=True, score_error=True).rating == Decimal("0.5")
    wrong = [DefectJudgement(False, True)]
    assert meta_rating(wrong, expression_error=True, score_error=True).rating == Decimal("0")
