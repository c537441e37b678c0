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
