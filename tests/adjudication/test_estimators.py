"""The estimators of adjudication.estimators against the maintained libraries (crowd-kit,
ppi-python: dev extras only) and on data whose answer is known."""

import numpy as np
import pandas as pd
import pytest
from crowdkit.aggregation import DawidSkene
from ppi_py import ppi_mean_ci

from adjudication.estimators import (
    bootstrap_mean_interval,
    dawid_skene,
    labels_needed,
    posterior,
    ppi_mean_interval,
)


def _crowd(seed: int, n_tasks: int = 80, accuracies=(0.9, 0.8, 0.7, 0.55, 0.4)):
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 3, size=n_tasks)
    rows = []
    for worker, accuracy in enumerate(accuracies):
        for task in range(n_tasks):
            if rng.random() < 0.8:
                said = truth[task] if rng.random() < accuracy else rng.integers(0, 3)
                rows.append((task, worker, int(said)))
    return truth, rows


def test_dawid_skene_matches_crowd_kit_with_and_without_gold():
    truth, rows = _crowd(1)
    frame = pd.DataFrame(rows, columns=["task", "worker", "label"])
    gold = {task: int(truth[task]) for task in range(0, 80, 10)}
    for known in (None, gold):
        theirs = DawidSkene(n_iter=30, tol=-np.inf).fit(
            frame, true_labels=None if known is None else pd.Series(known)
        )
        ours = dawid_skene(
            tasks=frame.task,
            workers=frame.worker,
            labels=frame.label,
            n_tasks=80,
            n_workers=5,
            n_classes=3,
            gold=known,
            n_iter=30,
            tol=None,
        )
        probas = theirs.probas_.sort_index()[[0, 1, 2]]
        assert np.allclose(ours.posteriors[probas.index], probas.to_numpy(), atol=1e-6)
        errors = theirs.errors_  # (worker, said) x true
        for worker in range(5):
            matrix = errors.loc[worker].sort_index()[[0, 1, 2]].to_numpy().T
            assert np.allclose(ours.confusion[worker], matrix, atol=1e-6)


def test_dawid_skene_finds_the_bad_rater_and_the_truth():
    truth, rows = _crowd(2, n_tasks=300)
    t, w, y = zip(*rows, strict=True)
    model = dawid_skene(tasks=t, workers=w, labels=y, n_tasks=300, n_workers=5, n_classes=3)
    rates = [model.error_rate(worker) for worker in range(5)]
    # wrong 0.1 x 2/3 of the time for the best, 0.6 x 2/3 for the worst
    assert rates[0] < 0.12 and rates[4] > 0.3
    assert (model.posteriors.argmax(axis=1) == truth).mean() > 0.9


def test_gold_items_keep_their_class_whatever_the_raters_say():
    model = dawid_skene(
        tasks=[0, 0, 1, 1],
        workers=[0, 1, 0, 1],
        labels=[1, 1, 0, 0],
        n_tasks=2,
        n_workers=2,
        n_classes=2,
        gold={0: 0},
    )
    assert model.posteriors[0].tolist() == [1.0, 0.0]


def test_ppi_matches_ppi_python_and_is_narrower_with_a_good_grader():
    rng = np.random.default_rng(3)
    truth = rng.random(600)
    predicted = np.clip(truth + rng.normal(0, 0.1, 600), 0, 1)
    y, yhat, unl = truth[:40], predicted[:40], predicted[40:]
    ours = ppi_mean_interval(y, yhat, unl, small_sample=False)
    low, high = ppi_mean_ci(y, yhat, unl, alpha=0.05)
    assert ours.low == pytest.approx(float(low[0]), abs=1e-9)
    assert ours.high == pytest.approx(float(high[0]), abs=1e-9)
    for lam in (0.0, 1.0):
        low, high = ppi_mean_ci(y, yhat, unl, alpha=0.05, lam=lam)
        fixed = ppi_mean_interval(y, yhat, unl, lam=lam, small_sample=False)
        assert (fixed.low, fixed.high) == pytest.approx((float(low[0]), float(high[0])))
    assert ours.width < bootstrap_mean_interval(y).width / 2
    # the small-sample interval is wider by t(39) / z (and n / (n - 1) under the root)
    wider = ppi_mean_interval(y, yhat, unl)
    assert wider.mean == ours.mean and wider.width > ours.width * 1.02


def test_bootstrap_interval_and_the_labels_a_width_needs():
    values = [0, 1] * 50
    interval = bootstrap_mean_interval(values, small_sample=False)
    assert interval.mean == 0.5 and interval.low < 0.5 < interval.high
    assert interval.width == pytest.approx(2 * 1.96 * 0.5 / 10, rel=0.15)
    # a quarter of the width takes sixteen times the labels
    assert labels_needed(interval, interval.width / 4) == pytest.approx(1600, rel=0.2)
    assert bootstrap_mean_interval([1]) is None
    assert ppi_mean_interval([1], [1], [1, 0]) is None


def test_the_posterior_of_one_item_is_the_fits_e_step():
    truth, rows = _crowd(4)
    t, w, y = zip(*rows, strict=True)
    model = dawid_skene(tasks=t, workers=w, labels=y, n_tasks=80, n_workers=5, n_classes=3)
    mine = [(worker, said) for task, worker, said in rows if task == 7]
    found = posterior(model.priors, [model.confusion[k] for k, _ in mine], [s for _, s in mine])
    assert np.allclose(found, model.posteriors[7], atol=1e-4)


def test_t_quantile_and_the_expanded_bootstrap():
    from scipy.stats import t

    from adjudication.estimators import t_quantile

    assert t_quantile(0.95, 3) == pytest.approx(t.ppf(0.975, 3), abs=5e-3)
    for df in (9, 19, 49, 500):
        assert t_quantile(0.95, df) == pytest.approx(t.ppf(0.975, df), abs=2e-4)
    values = np.random.default_rng(6).normal(0, 1, 20)
    plain = bootstrap_mean_interval(values, small_sample=False)
    expanded = bootstrap_mean_interval(values)
    assert expanded.low < plain.low and expanded.high > plain.high
    assert expanded.width / plain.width == pytest.approx(1.08, abs=0.05)


def test_raters_weighted_as_one_voice_count_once():
    confusion = np.array([[0.8, 0.2], [0.3, 0.7]])
    one = posterior([0.5, 0.5], [confusion], [1])
    twice = posterior([0.5, 0.5], [confusion, confusion], [1, 1])
    halves = posterior([0.5, 0.5], [confusion, confusion], [1, 1], [0.5, 0.5])
    assert np.allclose(halves, one) and twice[1] > one[1]


# --- the candidate rater models (adjudication.rater_models) -----------------------------------


def test_one_coin_matches_crowd_kit_with_and_without_gold():
    from crowdkit.aggregation import OneCoinDawidSkene

    from adjudication.rater_models import Observations, rater_model_fit

    truth, rows = _crowd(5)
    frame = pd.DataFrame(rows, columns=["task", "worker", "label"])
    gold = {task: int(truth[task]) for task in range(0, 80, 10)}
    theirs = OneCoinDawidSkene(n_iter=30, tol=-np.inf).fit(frame)
    data = dict(tasks=frame.task, workers=frame.worker, labels=frame.label, n_tasks=80)
    ours = rater_model_fit(
        "one-coin", Observations.of(**data, n_workers=5, n_classes=3), n_iter=30, tol=None
    )
    probas = theirs.probas_.sort_index()[[0, 1, 2]]
    assert np.allclose(ours.posteriors[probas.index], probas.to_numpy(), atol=1e-8)
    for worker in range(5):
        assert ours.confusion[worker, 0, 0] == pytest.approx(theirs.skills_.loc[worker], abs=1e-8)
        matrix = theirs.errors_.loc[worker].sort_index()[[0, 1, 2]].to_numpy().T
        assert np.allclose(ours.confusion[worker], matrix, atol=1e-8)
    # gold stays known, and moves the others
    pinned = rater_model_fit(
        "one-coin", Observations.of(**data, n_workers=5, n_classes=3, gold=gold), tol=1e-7
    )
    assert all(pinned.posteriors[t, c] == 1.0 for t, c in gold.items())


def test_the_discretised_normal_against_scipy_and_by_hand():
    from scipy.stats import norm

    from adjudication.rater_models import discretised_normal

    matrix = discretised_normal(4, 0.3, 0.8)
    for true in range(4):
        edges = [-np.inf, 0.5, 1.5, 2.5, np.inf]
        expected = np.diff(norm.cdf((np.array(edges) - true - 0.3) / 0.8))
        assert np.allclose(matrix[true], expected, atol=5e-7)
    # by hand: sd 1, no bias, 3 classes; the middle row is Phi(-1/2), 1 - 2 Phi(-1/2), Phi(-1/2)
    middle = discretised_normal(3, 0.0, 1.0)[1]
    assert middle == pytest.approx([0.3085375, 0.3829249, 0.3085375], abs=1e-6)


def test_the_ordinal_m_step_finds_the_maximum_scipy_finds():
    """One rater and known truth (every task gold): the M-step's grid optimum is within a grid
    step of scipy.optimize's continuous maximum of the likelihood."""
    from scipy.optimize import minimize
    from scipy.stats import norm

    from adjudication.rater_models import Observations, rater_model_fit

    rng = np.random.default_rng(7)
    true = rng.integers(0, 6, size=400)
    said = np.clip(np.rint(true + 0.6 + rng.normal(0, 0.9, size=400)), 0, 5).astype(int)
    data = dict(tasks=range(400), workers=[0] * 400, labels=said, n_tasks=400, n_workers=1)
    gold = {t: int(c) for t, c in enumerate(true)}
    model_obs = Observations.of(**data, n_classes=6, gold=gold)
    model = rater_model_fit("ordinal", model_obs, tol=1e-6)

    def minus_log_likelihood(params):
        bias, log_sd = params
        upper = np.where(said == 5, np.inf, said + 0.5)
        lower = np.where(said == 0, -np.inf, said - 0.5)
        sd = np.exp(log_sd)
        p = norm.cdf((upper - true - bias) / sd) - norm.cdf((lower - true - bias) / sd)
        return -np.log(np.clip(p, 1e-300, None)).sum()

    best = minimize(minus_log_likelihood, x0=[0.0, 0.0], method="Nelder-Mead").x
    from adjudication.rater_models import _counts, _ordinal_parameters, discretised_normal

    biases, sds = _ordinal_parameters(model_obs, _counts(model_obs, model.posteriors))
    bias, sd = float(biases[0]), float(sds[0])
    assert np.allclose(model.confusion[0], discretised_normal(6, bias, sd))
    assert abs(bias - best[0]) <= 0.1 + 1e-9
    assert abs(np.log(sd) - best[1]) <= 0.05
    assert best[0] == pytest.approx(0.6, abs=0.15) and np.exp(best[1]) == pytest.approx(
        0.9, abs=0.15
    )


def test_an_item_with_one_judgement_is_honestly_uncertain():
    """Experts right about 60% of the time, alone on an item: its label's confidence is near
    their accuracy (within 0.1) and never 0.9, where a full Dawid-Skene matrix estimated from a
    few hundred judgements states far more."""
    from adjudication.rater_models import Observations, rater_model_choose

    rng = np.random.default_rng(3)
    n, k = 300, 8
    truth = rng.integers(0, k, size=n)
    tasks, workers, labels = [], [], []
    for t in range(n):
        for w in rng.choice(4, size=2 if t < 120 else 1, replace=False):
            tasks.append(t), workers.append(int(w))
            labels.append(int(np.clip(np.rint(truth[t] + rng.normal(0, 0.6)), 0, k - 1)))
    obs = Observations.of(
        tasks=tasks, workers=workers, labels=labels, n_tasks=n, n_workers=4, n_classes=k
    )
    choice = rater_model_choose(obs)
    assert choice.candidate in {"ordinal", "ordinal-shrunk"}
    assert choice.scores["ordinal"] < choice.scores["dawid-skene"]
    single = [t for t in range(120, n)]
    said = np.array(labels)[[tasks.index(t) for t in single]]
    stated = choice.model.posteriors[single, said]
    right = said == truth[single]
    assert stated.mean() == pytest.approx(right.mean(), abs=0.1)
    assert stated.max() < 0.9
    assert choice.judgement_cases == 120 and choice.enough


def test_calibration_error_and_its_bootstrap_interval():
    from adjudication.rater_models import ece_bootstrap_interval, expected_calibration_error

    confidence = np.array([0.95, 0.95, 0.95, 0.95, 0.55, 0.55])
    hit = np.array([1, 1, 1, 0, 1, 0])
    # bins 9: |3.8 - 3| = 0.8; bin 5: |1.1 - 1| = 0.1; over 6 cases
    assert expected_calibration_error(confidence, hit) == pytest.approx(0.9 / 6)
    low, high = ece_bootstrap_interval(np.tile(confidence, 20), np.tile(hit, 20), seed=1)
    assert low <= 0.15 <= high and high - low < 0.2
    # few cases: the resamples' ECE reads higher than the estimate; the interval still holds it
    # (four bins of 20 cases, each exactly as confident as it is right: ECE 0; a resample
    # is exact in all four bins about once in a thousand)
    stated = np.repeat([0.55, 0.65, 0.75, 0.85], 20)
    came = np.concatenate([np.arange(20) < k for k in (11, 13, 15, 17)])
    point = expected_calibration_error(stated, came)
    assert point == pytest.approx(0.0)
    low, high = ece_bootstrap_interval(stated, came, seed=2)
    assert 0 <= low <= point <= high
    assert ece_bootstrap_interval([0.5], [1]) is None


def test_bootstrap_resamples_keep_each_task_whole():
    from adjudication.rater_models import Observations, resampled

    obs = Observations.of(
        tasks=[0, 0, 1, 2, 2, 2],
        workers=[0, 1, 0, 0, 1, 2],
        labels=[1, 1, 0, 2, 2, 1],
        n_tasks=3,
        n_workers=3,
        n_classes=3,
        gold={1: 0},
    )
    again = resampled(obs, np.random.default_rng(4))
    for task in range(3):
        rows = np.flatnonzero(again.tasks == task)
        assert len(rows) in (1, 2, 3)
        assert sorted(zip(again.workers[rows], again.labels[rows], strict=True)) in [
            [(0, 1), (1, 1)],
            [(0, 0)],
            [(0, 2), (1, 2), (2, 1)],
        ]
    assert all(again.labels[again.tasks == t][0] == 0 for t in again.gold)
