"""The statistics of the design-space report against references: scipy's t distribution, t-test,
Benjamini-Yekutieli and permutation test, numpy's least squares, and the alternative annotator
test on worked examples computed by hand."""

import math

import numpy as np
import pytest
from scipy import stats

from graders import trust
from graders.trust import PairwisePick, ProbeRecord


@pytest.mark.parametrize(("t", "df"), [(-3.2, 3), (-1.069045, 4), (0.4, 7), (2.5, 30), (-0.01, 1)])
def test_t_distribution_matches_scipy(t, df):
    assert trust.t_cdf(t, df) == pytest.approx(stats.t.cdf(t, df), abs=1e-10)


def test_one_sided_t_test_matches_scipy():
    differences = [1, -1, 0, 0, -1, 0, 1, -1, -1, 0]
    t, p = trust.one_sided_t_test(differences, 0.2)
    reference = stats.ttest_1samp(differences, popmean=0.2, alternative="less")
    assert t == pytest.approx(reference.statistic) and p == pytest.approx(reference.pvalue)


def test_benjamini_yekutieli_matches_scipy():
    p = [0.001, 0.04, 0.03, 0.2, 0.5, 0.012]
    assert trust.benjamini_yekutieli(p) == pytest.approx(
        list(stats.false_discovery_control(p, method="by"))
    )


@pytest.mark.parametrize("clusters", [3, 7])
def test_sign_flip_test_matches_scipy_exact_permutations(clusters):
    rng = np.random.default_rng(clusters)
    a, b = rng.uniform(0, 2, clusters), rng.uniform(0, 1.5, clusters)
    ours = trust.sign_flip_test(list(a), list(b))
    reference = stats.permutation_test(
        (a, b),
        lambda x, y, axis: np.sum(x - y, axis=axis),
        permutation_type="samples",
        n_resamples=np.inf,
        vectorized=True,
        alternative="two-sided",
    )
    assert ours["exact"] and ours["permutations"] == 2**clusters
    assert ours["statistic"] == pytest.approx(reference.statistic)
    assert ours["p_value"] == pytest.approx(reference.pvalue)


def test_length_slope_is_least_squares_with_one_intercept_per_label():
    records = [
        ProbeRecord("p1", 7, 7, 1000, "x", False),
        ProbeRecord("p1", 7, 6, 400, "x", False),
        ProbeRecord("p2", 7, 7, 2200, "x", False),
        ProbeRecord("p2", 3, 5, 3000, "x", False),
        ProbeRecord("p3", 3, 3, 900, "x", False),
        ProbeRecord("p3", 3, 4, 1800, "x", False),
    ]
    labels = sorted({r.expert for r in records})
    design = np.array(
        [[r.length / 1000] + [1.0 if r.expert == v else 0.0 for v in labels] for r in records]
    )
    residuals = np.array([r.residual for r in records])
    coefficients, *_ = np.linalg.lstsq(design, residuals, rcond=None)
    assert trust.length_slope(records) == pytest.approx(coefficients[0])
    assert trust.length_slope(records[:1]) is None  # no variation within a label


def test_cluster_bootstrap_keeps_a_problem_drawn_twice_as_two():
    draws = trust.cluster_resamples([[0, 1], [2]], resamples=50, seed=3)
    assert all(len({n for n, _ in draw}) == 2 for draw in draws)
    assert any([i for _, i in draw] in ([0, 1, 0, 1], [2, 2]) for draw in draws)
    assert trust.percentile_interval([0, 1, 2, 3, 4]) == [
        pytest.approx(np.percentile([0, 1, 2, 3, 4], 2.5)),
        pytest.approx(np.percentile([0, 1, 2, 3, 4], 97.5)),
    ]


# --- The alternative annotator test, by hand ----------------------------------------------------


def test_alt_test_worked_example_where_the_grader_may_not_stand_in():
    """Two experts, five items, epsilon 0.2. Leaving A out (the other is B):
    grader vs B -|G - B| = -1, 0, 0, -1, 0; A vs B -|A - B| = 0, -1, 0, -1, -4;
    W^f = 0, 1, 1, 1, 1 (rho_f 0.8), W^h = 1, 0, 1, 1, 0 (rho_h 0.6), d = 1, -1, 0, 0, -1:
    mean -0.2, sd sqrt(0.7), t = (-0.2 - 0.2) / sqrt(0.7 / 5) = -1.0690.
    Leaving B out (the other is A): -|G - A| = -1, -1, 0, 0, -4; -|B - A| = 0, -1, 0, -1, -4;
    W^f = 0, 1, 1, 1, 1, W^h = 1, 1, 1, 0, 1 (both rho 0.8), d = 1, 0, 0, -1, 0: mean 0,
    sd sqrt(0.5), t = -0.2 / sqrt(0.5 / 5) = -0.6325. BY over two tests (c = 1.5): the larger p
    times 1.5, the smaller no lower: both well above 0.05, omega = 0, the test fails."""
    a = {1: 7, 2: 5, 3: 3, 4: 0, 5: 6}
    b = {1: 7, 2: 4, 3: 3, 4: 1, 5: 2}
    g = {1: 6, 2: 4, 3: 3, 4: 0, 5: 2}
    result = trust.alt_test({"A": a, "B": b}, g, epsilon=0.2)
    left_a, left_b = result["experts"]
    assert (left_a["rho_f"], left_a["rho_h"]) == (0.8, pytest.approx(0.6))
    assert left_a["t"] == pytest.approx(-0.4 / math.sqrt(0.14))
    assert left_a["p_value"] == pytest.approx(
        stats.ttest_1samp([1, -1, 0, 0, -1], popmean=0.2, alternative="less").pvalue
    )
    assert (left_b["rho_f"], left_b["rho_h"]) == (0.8, 0.8)
    assert left_b["t"] == pytest.approx(-0.2 / math.sqrt(0.1))
    p_a, p_b = left_a["p_value"], left_b["p_value"]
    assert p_a < p_b
    assert left_b["p_adjusted"] == pytest.approx(1.5 * p_b)
    assert left_a["p_adjusted"] == pytest.approx(min(1.5 * p_b, 3 * p_a))
    assert result["omega"] == 0 and not result["passes"] and result["rho"] == pytest.approx(0.8)


def test_alt_test_worked_example_where_the_grader_may_stand_in():
    """The grader gives expert A's scores. Leaving A out: the grader and A are equally aligned
    with B on every item, d = 0 everywhere (no variance, mean 0 < epsilon): p = 0. Leaving B
    out: the grader agrees with A exactly, B differs on two of six items, d = 0, 0, 0, 0, -1, -1:
    mean -1/3, t = (-1/3 - 0.2) / (sd / sqrt 6) = -2.5298, p = 0.026 (scipy). BY: 0.026 x 2 x
    1.5 / 2 = 0.039 <= 0.05 and 0: both rejected, omega = 1."""
    a = {i: v for i, v in enumerate([1, 2, 3, 4, 5, 6])}
    b = {i: v for i, v in enumerate([1, 2, 3, 4, 6, 7])}
    result = trust.alt_test({"A": a, "B": b}, dict(a), epsilon=0.2)
    left_a, left_b = result["experts"]
    assert left_a["p_value"] == 0 and left_a["t"] is None  # -inf: no variance
    reference = stats.ttest_1samp([0, 0, 0, 0, -1, -1], popmean=0.2, alternative="less")
    assert left_b["t"] == pytest.approx(reference.statistic) == pytest.approx(-2.5298, abs=1e-4)
    assert left_b["p_value"] == pytest.approx(reference.pvalue)
    assert left_b["p_adjusted"] == pytest.approx(reference.pvalue * 1.5)
    assert left_b["p_adjusted"] < 0.05
    assert result["omega"] == 1 and result["passes"]


def test_alt_test_needs_items_scored_by_two_experts():
    result = trust.alt_test({"A": {1: 3}, "B": {2: 4}}, {1: 3, 2: 4})
    assert result["tested"] == 0 and result["omega"] is None and not result["passes"]


# --- Probes and ensembles ------------------------------------------------------------------------


def test_position_probe_counts_changed_picks_and_first_position_picks():
    picks = [
        PairwisePick("p1", "a", "a"),
        PairwisePick("p1", "a", "b"),
        PairwisePick("p2", "b", "b"),
        PairwisePick("p2", "tie", "a"),
    ]
    probe = trust.position_probe(picks)
    assert probe["effect"] == 0.5  # two of four pairs change their pick with the order
    # decisive picks of the proof shown first: a, a (forward), b, b (backward) of seven
    assert probe["first_preference"] == pytest.approx(4 / 7 - 0.5)
    assert trust.position_probe([])["none"].startswith("No pairwise grader runs")


def test_ensemble_curve_averages_over_subsets_of_runs():
    runs = {1: {0: 4, 1: 6}, 2: {0: 2, 1: 2}}
    labels = {1: ("P1", 5, 0), 2: ("P2", 2, 0)}
    curve = trust.ensemble_curve(
        runs, labels, k=2, aggregation="mean", categories=[float(v) for v in range(8)]
    )
    assert [row["subsets"] for row in curve] == [2, 1]
    assert curve[0]["mae"] == 0.5 and curve[1]["mae"] == 0


@pytest.mark.parametrize(
    ("name", "family"),
    [
        ("gpt-5-mini", "openai"),
        ("o3", "openai"),
        ("openai/o4-mini", "openai"),
        ("models/gemini-2.5-pro", "google"),
        ("claude-opus-4", "anthropic"),
        ("DeepSeek-Math-V2", "deepseek"),
        ("Qwen3-235B", "qwen"),
        ("fake-o3", "openai"),
        ("solo7b", "solo7b"),
        ("mystery-model", "mystery"),
    ],
)
def test_model_family(name, family):
    assert trust.model_family(name) == family


@pytest.mark.parametrize(
    ("context", "reference", "scheme"),
    [
        ("none", False, False),
        ("reference", True, False),
        ("scheme", False, True),
        ("both", True, True),
    ],
)
@pytest.mark.parametrize("instruction", ["flexible", "strict"])
def test_each_cell_prompt_holds_its_context_and_keeps_the_score_contract(
    context, reference, scheme, instruction
):
    from graders.grading import design_messages

    system, user = design_messages(
        context=context,
        instruction=instruction,
        problem="Show P.",
        reference="REF-TEXT",
        scheme="",
        proof="PROOF-TEXT",
    )
    content = user["content"]
    assert f"({instruction} grading)" in content and "PROOF-TEXT" in content
    assert ("## Reference solution\nREF-TEXT" in content) is reference
    assert ("## Marking scheme\n(No marking scheme" in content) is scheme
    assert "<score>the score: one integer from 0 to 7</score>" in content
    assert ("strict examiner" in system["content"]) is (instruction == "strict")
