"""The metric functions against examples worked by hand from the papers' definitions, and against
scipy / scikit-learn where the definitions agree."""

import math
import random

import pytest
from scipy import stats
from sklearn.metrics import cohen_kappa_score

from adjudication import agreement
from graders import metrics as m
from graders.metrics import Pair


def test_a3_tau_b_counts_a_pair_tied_on_both_sides_in_both_tie_terms_unlike_scipy():
    # Pairs: (1,1 | 2,2) tied on both sides; (1,3 | 2,5) and (1,3 | 2,5) concordant.
    # A.3: C=2, D=0, T_exp=1, T_eval=1 -> 2 / sqrt(3 * 3) = 2/3.
    # Standard tau-b: the doubly tied pair is in neither term -> 2 / sqrt(2 * 2) = 1.
    expert, predicted = [1, 1, 3], [2, 2, 5]
    counts = m.pair_counts(expert, predicted)
    assert (counts.concordant, counts.discordant) == (2, 0)
    assert (counts.tied_expert, counts.tied_eval, counts.tied_both) == (1, 1, 1)
    assert m.kendall_tau_b_a3(expert, predicted) == pytest.approx(2 / 3)
    assert m.kendall_tau_b_standard(expert, predicted) == pytest.approx(1.0)
    assert stats.kendalltau(expert, predicted, variant="b").statistic == pytest.approx(1.0)


def test_a3_tau_b_equals_scipy_when_no_pair_is_tied_on_both_sides():
    # (0,2 | 1,1) tied on the grader side only; the five other pairs concordant:
    # 5 / sqrt((5 + 0)(5 + 1)).
    expert, predicted = [0, 2, 5, 7], [1, 1, 4, 6]
    assert m.kendall_tau_b_a3(expert, predicted) == pytest.approx(5 / math.sqrt(30))
    assert m.kendall_tau_b_a3(expert, predicted) == pytest.approx(
        stats.kendalltau(expert, predicted, variant="b").statistic
    )


def test_standard_tau_b_matches_scipy_on_random_scores_with_ties():
    rng = random.Random(7)
    for _ in range(50):
        size = rng.randint(3, 12)
        expert = [rng.randint(0, 7) for _ in range(size)]
        predicted = [rng.randint(0, 7) for _ in range(size)]
        ours = m.kendall_tau_b_standard(expert, predicted)
        theirs = stats.kendalltau(expert, predicted, variant="b").statistic
        if ours is None:
            assert math.isnan(theirs)
        else:
            assert ours == pytest.approx(theirs)


def test_tau_b_undefined_cases():
    # A constant grader against distinct expert scores: both versions undefined.
    assert m.kendall_tau_b_a3([1, 2, 3], [4, 4, 4]) is None
    assert m.kendall_tau_b_standard([1, 2, 3], [4, 4, 4]) is None
    # Both sides constant: A.3 has 0 / sqrt(3 * 3) = 0, the standard one is undefined.
    assert m.kendall_tau_b_a3([5, 5, 5], [2, 2, 2]) == 0
    assert m.kendall_tau_b_standard([5, 5, 5], [2, 2, 2]) is None
    assert m.kendall_tau_b_a3([3], [3]) is None


def test_macro_metrics_average_per_problem_and_leave_out_undefined_tau():
    pairs = [
        # Problem A: errors -1 and +2.
        Pair("A", 7, 6, 0),
        Pair("A", 0, 2, 1),
        # Problem B: errors 0, +1, +2; experts all tied, grader never tied -> tau undefined.
        Pair("B", 3, 3, 0),
        Pair("B", 3, 4, 1),
        Pair("B", 3, 5, 2),
    ]
    result = m.macro_metrics(pairs)
    assert result.problems == 2
    assert result.mae == pytest.approx((1.5 + 1.0) / 2)
    assert result.rmse == pytest.approx((math.sqrt(5 / 2) + math.sqrt(5 / 3)) / 2)
    assert result.bias == pytest.approx((0.5 + 1.0) / 2)
    assert result.within_1 == pytest.approx((0.5 + 2 / 3) / 2)
    assert result.tau_b_a3 == pytest.approx(1.0)
    assert result.tau_b_a3_problems == 1
    by_problem = {p.problem: p for p in result.per_problem}
    assert by_problem["B"].tau_b_a3 is None
    assert by_problem["A"].n == 2
    # Pooled MAE would be (1 + 2 + 0 + 1 + 2) / 5 = 1.2: the macro average differs.
    assert m.mae([7, 0, 3, 3, 3], [6, 2, 3, 4, 5]) == pytest.approx(1.2)


def test_pooled_metrics_match_scipy_and_sklearn():
    rng = random.Random(3)
    expert = [rng.randint(0, 7) for _ in range(60)]
    predicted = [min(7, max(0, e + rng.choice([-2, -1, 0, 0, 1, 2]))) for e in expert]
    result = m.pooled_metrics(expert, predicted, list(range(8)))
    assert result.n == 60
    assert result.pearson == pytest.approx(stats.pearsonr(expert, predicted).statistic)
    assert result.spearman == pytest.approx(stats.spearmanr(expert, predicted).statistic)
    assert result.qwk == pytest.approx(
        cohen_kappa_score(expert, predicted, weights="quadratic", labels=list(range(8)))
    )
    assert result.rmse == pytest.approx(
        math.sqrt(sum((p - e) ** 2 for e, p in zip(expert, predicted, strict=True)) / 60)
    )


def test_qwk_by_hand():
    # Two categories {0, 1}: O = [[1, 1], [0, 2]] / 4, marginals rows (1/2, 1/2), cols (1/4, 3/4).
    # Weighted observed = 1/4; weighted expected = 1/2 * 3/4 + 1/2 * 1/4 = 1/2 -> kappa = 1/2.
    qwk = m.pooled_metrics([0, 0, 1, 1], [0, 1, 1, 1], [0, 1]).qwk
    assert qwk == pytest.approx(0.5)


def test_one_definition_of_kappa_confusion_and_bias():
    """The grader evaluation's kappa, confusion matrix and bias are the agreement pages' own."""
    expert, predicted = [0, 3, 5, 7, 7], [1, 3, 4, 7, 6]
    labels = list(range(8))
    pooled = m.pooled_metrics(expert, predicted, labels)
    assert pooled.qwk == agreement.quadratic_weighted_kappa(expert, predicted, labels)
    pairs = [Pair("p", e, p) for e, p in zip(expert, predicted, strict=True)]
    per_problem = m.problem_metrics("p", pairs)
    assert per_problem.bias == agreement.bias(predicted, expert) == pytest.approx(-0.2)
    for twice in ("quadratic_weighted_kappa", "confusion_matrix", "bias"):
        assert not hasattr(m, twice)


def test_spearman_without_ties_is_refgraders_formula():
    x, y = [1, 2, 3, 4, 5], [2, 1, 4, 3, 5]
    d2 = sum((a - b) ** 2 for a, b in zip(x, y, strict=True))
    assert agreement.spearman(x, y) == pytest.approx(1 - 6 * d2 / (5 * (25 - 1)))


def test_confusion_matrix_reads_means_as_the_nearest_category_halfway_lower():
    # 0.2 -> 0; 0.75 (halfway) -> 0.5; 0.4 -> 0.5; 0.8 -> 1
    matrix = agreement.confusion_matrix([0, 0.5, 1, 1, 1], [0.2, 0.75, 1, 0.4, 0.8], [0, 0.5, 1])
    assert matrix == [[1, 0, 0], [0, 1, 0], [0, 1, 2]]


def test_score_reward_deepseekmath_v2():
    assert m.score_reward(1, 0.5) == 0.5
    assert m.score_reward(0, 1) == 0
    assert m.mean_score_reward([1, 0, 0.5], [1, 0.5, 0.5]) == pytest.approx((1 + 0.5 + 1) / 3)
    with pytest.raises(ValueError, match="outside"):
        m.score_reward(7, 6)


def test_best_of_n_by_hand_with_ties_to_the_earlier_proof():
    # Original order 0, 1, 2: expert (2, 7, 5), grader (6, 6, 3).
    pairs = [Pair("P", 2, 6, 0), Pair("P", 7, 6, 1), Pair("P", 5, 3, 2)]
    curve = m.best_of_n_curve(pairs, samples=100, seed=1)
    assert [p.n for p in curve] == [1, 2, 3]
    one, two, three = curve
    # the grader over every subset; A.4's oracle and mean over the first n proofs
    assert one.grader == pytest.approx(14 / 3)
    assert (one.oracle, one.mean) == (2, 2)
    # {0,1}: tie 6/6 -> proof 0 (expert 2); {0,2} -> 0 (2); {1,2} -> 1 (7).
    assert two.grader == pytest.approx((2 + 2 + 7) / 3)
    assert (two.oracle, two.mean) == (7, 4.5)
    assert (three.grader, three.oracle, three.mean) == pytest.approx((2, 7, 14 / 3))


def test_best_of_n_baselines_over_the_subsets_as_an_option():
    pairs = [Pair("P", 2, 6, 0), Pair("P", 7, 6, 1), Pair("P", 5, 3, 2)]
    one, two, _ = m.best_of_n_curve(pairs, samples=100, seed=1, baselines="subsets")
    assert (one.oracle, one.mean) == pytest.approx((14 / 3, 14 / 3))
    assert two.oracle == pytest.approx((7 + 5 + 7) / 3)
    assert two.mean == pytest.approx((4.5 + 3.5 + 6) / 3)
    assert two.grader == m.best_of_n_curve(pairs, samples=100, seed=1)[1].grader
    with pytest.raises(ValueError, match="first_n"):
        m.best_of_n_curve(pairs, baselines="all")


def test_best_of_n_first_n_follows_the_original_order_not_the_list_order():
    # listed out of order: proof 0 scores 1, proof 1 scores 6
    pairs = [Pair("P", 6, 0, 1), Pair("P", 1, 0, 0), Pair("Q", 3, 0, 0)]
    one = m.best_of_n_curve(pairs)[0]
    assert (one.oracle, one.mean, one.problems) == (2, 2, 2)  # (1 + 3) / 2


def test_best_of_n_sampling_is_seeded_and_problems_with_too_few_proofs_drop_out():
    rng = random.Random(11)
    pairs = [Pair("big", rng.randint(0, 7), rng.randint(0, 7), i) for i in range(16)]
    pairs += [Pair("small", 3, 3, 0), Pair("small", 5, 1, 1)]
    first = m.best_of_n_curve(pairs, samples=50, seed=5, baselines="subsets")
    assert first == m.best_of_n_curve(pairs, samples=50, seed=5, baselines="subsets")
    assert len(first) == 16
    assert first[1].problems == 2 and first[2].problems == 1
    for point in first:
        assert point.mean <= point.oracle + 1e-9
        assert point.grader <= point.oracle + 1e-9
    oracles = [p.oracle for p in m.best_of_n_curve(pairs, samples=50, seed=5)]
    assert oracles[2:] == sorted(oracles[2:])  # one problem left: the first-n best only grows


def test_aggregate_runs():
    runs = [7, 5, 5, 2, 7]
    assert m.aggregate_runs(runs, "mean") == pytest.approx(5.2)
    assert m.aggregate_runs(runs, "median") == 5
    assert m.aggregate_runs(runs, "min") == 2
    assert m.aggregate_runs(runs, "max") == 7
    assert m.aggregate_runs(runs, "majority") == 5  # 5 and 7 twice each: the lower
    with pytest.raises(ValueError, match="unknown aggregation"):
        m.aggregate_runs(runs, "mode")


def test_length_mismatch_is_a_clear_error():
    with pytest.raises(ValueError, match="2 expert scores but 1 predictions"):
        m.mae([1, 2], [1])
