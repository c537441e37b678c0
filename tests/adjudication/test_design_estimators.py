"""The design-weighted estimators (adjudication/estimators.py) against references on small
fixed data: the Hajek mean and its cluster-robust variance against statsmodels' weighted least
squares with a cluster covariance; the active PPI mean against its formula computed by hand;
the inclusion probabilities and the Pareto draw on cases worked out on paper."""

import math

import numpy as np
import pytest
import statsmodels.api as sm

from adjudication.estimators import (
    active_ppi_mean_interval,
    effective_clusters,
    ipw_mean_interval,
    pareto_sample,
    pps_probabilities,
    t_quantile,
)

Y = np.array([0.0, 1.0, 1.0, 0.5, 0.0, 1.0, 0.25, 0.75, 1.0, 0.0])
PI = np.array([0.2, 0.5, 1.0, 0.25, 0.4, 0.8, 0.1, 0.5, 1.0, 0.3])
PROBLEM = np.array([1, 1, 2, 2, 2, 3, 3, 4, 5, 5])


def test_hajek_mean_and_cluster_variance_equal_statsmodels_wls():
    found = ipw_mean_interval(Y, PI, PROBLEM)
    fit = sm.WLS(Y, np.ones((len(Y), 1)), weights=1 / PI).fit(
        cov_type="cluster", cov_kwds={"groups": PROBLEM}
    )
    assert found.mean == pytest.approx(fit.params[0], abs=1e-12)
    se = found.sd / math.sqrt(found.n)
    assert se == pytest.approx(fit.bse[0], abs=1e-12)
    assert found.clusters == 5 and found.n == 10
    # unequal weights: the t quantile's degrees of freedom from Kish's effective clusters
    totals = np.array([np.sum(1 / PI[np.equal(PROBLEM, g)]) for g in range(1, 6)])
    g_star = math.floor(totals.sum() ** 2 / np.sum(totals**2))
    assert g_star < 5 and effective_clusters(1 / PI, PROBLEM) == pytest.approx(
        totals.sum() ** 2 / np.sum(totals**2)
    )
    assert found.high - found.mean == pytest.approx(t_quantile(0.95, g_star - 1) * se)


def test_hajek_with_one_label_a_problem_and_equal_weights_is_the_plain_mean_and_se():
    y = np.array([0.0, 1.0, 1.0, 0.0, 1.0])
    found = ipw_mean_interval(y, [0.5] * 5, range(5))
    se = y.std(ddof=1) / math.sqrt(5)
    assert found.mean == pytest.approx(0.6)
    assert (found.high - found.mean) == pytest.approx(t_quantile(0.95, 4) * se)


def test_no_interval_without_a_known_positive_probability_or_two_problems():
    assert ipw_mean_interval([1.0, 0.0], [0.5, 0.0], [1, 2]) is None
    assert ipw_mean_interval([1.0, 0.0], [0.5, float("nan")], [1, 2]) is None
    assert ipw_mean_interval([1.0, 0.0], [0.5, 0.5], [1, 1]) is None
    assert (
        active_ppi_mean_interval([True, False], [1.0, None], [0.9, 0.2], [0.0, 1], [1, 2]) is None
    )


def test_active_ppi_equals_its_formula_by_hand():
    labelled = np.array([1, 0, 1, 0, 0, 1, 0, 1, 1, 0], dtype=bool)
    f = np.array([0.1, 0.9, 0.8, 0.6, 0.2, 0.7, 0.3, 0.5, 0.9, 0.2])
    values = [float(v) if lab else None for v, lab in zip(Y, labelled, strict=True)]
    lam = 0.6
    found = active_ppi_mean_interval(labelled, values, f, PI, PROBLEM, lam=lam)
    phi = lam * f + np.where(labelled, (Y - lam * f) / PI, 0.0)
    assert found.mean == pytest.approx(phi.mean(), abs=1e-12)
    masks = [np.equal(PROBLEM, g) for g in range(1, 6)]
    totals = [phi[m].sum() - m.sum() * phi.mean() for m in masks]
    se = math.sqrt(5 / 4 * sum(t**2 for t in totals)) / 10
    assert found.sd / math.sqrt(found.n) == pytest.approx(se, abs=1e-12)
    h_star = math.floor(effective_clusters(1 / PI[labelled], PROBLEM[labelled]))
    assert found.high - found.mean == pytest.approx(t_quantile(0.95, h_star - 1) * se)
    assert found.n == 5 and found.lam == lam


def test_active_ppi_tuned_lambda_minimises_the_variance():
    labelled = np.array([1, 0, 1, 0, 0, 1, 0, 1, 1, 0], dtype=bool)
    f = np.array([0.1, 0.9, 0.8, 0.6, 0.2, 0.7, 0.3, 0.5, 0.9, 0.2])
    values = [float(v) if lab else None for v, lab in zip(Y, labelled, strict=True)]
    tuned = active_ppi_mean_interval(labelled, values, f, PI, PROBLEM)
    for lam in np.linspace(0, 1, 21):
        fixed = active_ppi_mean_interval(labelled, values, f, PI, PROBLEM, lam=float(lam))
        assert tuned.width <= fixed.width + 1e-12
    # with every item labelled at probability 1 the predictions drop out: the plain mean
    full = active_ppi_mean_interval([True] * 10, Y, f, [1.0] * 10, PROBLEM)
    assert full.mean == pytest.approx(Y.mean())


def test_active_ppi_is_unbiased_under_an_uncertainty_design():
    """Exact expectation over a Poisson design: sum over the 2^n samples is too many, so a
    large seeded simulation at 3 standard errors."""
    rng = np.random.default_rng(3)
    truth = rng.random(40)
    f = np.clip(truth + 0.3 * rng.standard_normal(40), 0, 1)  # biased where truth is high
    pi = pps_probabilities(np.abs(f - 0.5) + 0.01, 10, uniform_share=0.25)
    estimates = []
    for _ in range(4000):
        lab = rng.random(40) < pi
        phi = f + np.where(lab, (truth - f) / pi, 0.0)
        estimates.append(phi.mean())
    estimates = np.array(estimates)
    assert abs(estimates.mean() - truth.mean()) < 3 * estimates.std() / math.sqrt(4000)


def test_probabilities_mix_a_uniform_share_and_cap_at_one():
    pi = pps_probabilities([0.0, 1.0, 1.0, 2.0], 2, uniform_share=0.5)
    # q = 0.125 + 0.5 w / 4: (0.125, 0.25, 0.25, 0.375), times 2: sums to 2, none above 1
    assert pi == pytest.approx([0.25, 0.5, 0.5, 0.75])
    capped = pps_probabilities([0.0, 0.0, 0.0, 10.0], 2, uniform_share=0.2)
    assert capped[3] == 1.0 and capped[:3] == pytest.approx([1 / 3] * 3)
    assert pps_probabilities([0.0, 1.0], 2, uniform_share=0) == pytest.approx([1.0, 1.0])
    assert pps_probabilities([0.0, 1.0], 1, uniform_share=0)[0] == 0.0  # no random share


def test_pareto_draw_is_fixed_size_and_matches_its_probabilities():
    pi = np.array([0.1, 0.2, 0.3, 0.4, 0.5, 0.5])
    rng = np.random.default_rng(5)
    counts = np.zeros(6)
    for _ in range(20000):
        chosen = pareto_sample(pi, rng.random(6), 2)
        assert chosen.sum() == 2
        counts += chosen
    assert counts / 20000 == pytest.approx(pi, abs=0.02)
    assert pareto_sample([1.0, 0.0, 0.5], [0.9, 0.1, 0.5], 1).tolist() == [True, False, False]


def test_weighted_agreement_figures_equal_sklearn_and_repeated_units():
    import krippendorff
    from sklearn.metrics import cohen_kappa_score

    from adjudication.agreement import krippendorff_alpha_ordinal, weighted_pair_figures

    groups = [[(3, 3)], [(4, 6)], [(0, 2)], [(7, 7)], [(5, 4)], [(1, 1)], [(2, 3)]]
    weights = [2, 1, 3, 1, 2, 1, 4]
    found = weighted_pair_figures(groups, weights, list(range(8)), 1)
    a = [g[0][0] for g in groups]
    b = [g[0][1] for g in groups]
    kappa = cohen_kappa_score(
        a, b, labels=list(range(8)), weights="quadratic", sample_weight=weights
    )
    assert found["kappa"] == pytest.approx(kappa, abs=1e-12)
    assert found["mad"] == pytest.approx(np.average(np.abs(np.subtract(a, b)), weights=weights))
    # alpha: an integer weight k is the unit repeated k times
    units = [[x, y] for x, y in zip(a, b, strict=True)]
    repeated = [unit for unit, k in zip(units, weights, strict=True) for _ in range(k)]
    expected = krippendorff.alpha(
        reliability_data=np.array(repeated, dtype=float).T,
        level_of_measurement="ordinal",
        value_domain=list(range(8)),
    )
    assert krippendorff_alpha_ordinal(units, list(range(8)), weights) == pytest.approx(
        expected, abs=1e-9
    )


def test_adaptive_double_scoring_weighted_agreement_is_unbiased_where_plain_is_not():
    """A campaign of 2,000 items whose experts disagree more where the graders are unsure; a
    quarter double-scored where disagreement is expected (30% uniform), Pareto draws: over 400
    seeded draws the weighted exact agreement centres on the whole campaign's, the plain one on
    the hard items'."""
    from adjudication.agreement import weighted_pair_figures

    rng = np.random.default_rng(11)
    size, doubles = 2000, 500
    unsure = rng.random(size)
    truth = rng.integers(0, 8, size)
    # the second expert is off by one on an unsure item far more often
    off = rng.random((400, size)) < 0.1 + 0.6 * unsure
    seconds = np.clip(truth + off, 0, 7)
    population = float((seconds == truth).mean())  # the whole campaign's, over the draws
    pi = pps_probabilities(unsure, doubles, uniform_share=0.3)
    weighted, plain = [], []
    for draw in range(400):
        chosen = pareto_sample(pi, rng.random(size), doubles)
        second = seconds[draw]
        groups = [[(truth[i], second[i])] for i in np.flatnonzero(chosen)]
        labels = list(range(8))
        weighted.append(weighted_pair_figures(groups, 1 / pi[chosen], labels, 0)["exact"])
        plain.append(weighted_pair_figures(groups, np.ones(doubles), labels, 0)["exact"])
    spread = np.std(weighted) / math.sqrt(400)
    assert abs(np.mean(weighted) - population) < 4 * spread + 0.003
    assert np.mean(plain) < population - 0.05  # the plain figure describes the hard items
