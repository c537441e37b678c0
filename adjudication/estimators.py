"""Estimators over many raters and many items, in numpy (no Django): written once, imported by
the services, the pages and the benchmarks.

- `dawid_skene`: the Dawid-Skene rater model (1979), fitted by EM over categorical labels of
  many raters (experts and automatic graders alike), with gold items as known values. Gives each
  item's posterior over the classes (a final label's confidence is the posterior of its class)
  and each rater's estimated confusion matrix P(said | true). The same updates as crowd-kit's
  `DawidSkene` (majority-vote start, M-step, E-step, gold items pinned each round); checked
  against it in tests/adjudication/test_estimators.py, where crowd-kit is a dev extra only.
- `bootstrap_mean_interval`: percentile bootstrap of a mean (vectorised, seeded).
- `ppi_mean_interval`: the prediction-powered mean (PPI++, Angelopoulos et al. 2023): a few
  gold values Y with the automatic prediction Yhat on the same items correct the mean of many
  predictions on unlabelled items; power-tuned (lambda in [0, 1]) so it is never wider than the
  classical interval in expectation. Checked against ppi-python (dev extra).
- `labels_needed`: how many gold labels an interval of a given width needs, from the standard
  deviation each interval uses.

Every interval is two-sided at `confidence` (0.95 unless told).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from statistics import NormalDist

import numpy as np

EPS = 1e-10


@dataclass(frozen=True)
class RaterModel:
    """A fitted Dawid-Skene model. posteriors[t, c] = P(item t is class c | every label);
    confusion[w, true, said] = P(rater w says `said` | the item is `true`); priors[c]."""

    posteriors: np.ndarray
    confusion: np.ndarray
    priors: np.ndarray
    iterations: int

    def error_rate(self, worker: int) -> float:
        """The rater's estimated chance of a wrong class, weighted by the class priors."""
        return float(1.0 - np.sum(self.priors * np.diag(self.confusion[worker])))


def dawid_skene(
    *,
    tasks: Sequence[int],
    workers: Sequence[int],
    labels: Sequence[int],
    n_tasks: int,
    n_workers: int,
    n_classes: int,
    gold: Mapping[int, int] | None = None,
    weights: Sequence[float] | None = None,
    n_iter: int = 100,
    tol: float | None = 1e-7,
) -> RaterModel:
    """Fits the model to observations (tasks[m], workers[m], labels[m]), all 0-based indices.
    `gold` maps task -> its known class (kept fixed). `weights[m]` (default 1) scales an
    observation's log-likelihood in the E-step: 1/k for each of k raters known to share their
    errors makes them count as one voice about the item (a tempered product), while each keeps
    its own confusion matrix. Stops after n_iter rounds, or sooner once no posterior moves by
    more than `tol` (None: always n_iter rounds)."""
    t = np.asarray(tasks, dtype=np.int64)
    w = np.asarray(workers, dtype=np.int64)
    y = np.asarray(labels, dtype=np.int64)
    weight = np.ones(len(t)) if weights is None else np.asarray(weights, dtype=float)
    if not (len(t) == len(w) == len(y)):
        raise ValueError("tasks, workers and labels must have one entry per observation")
    if len(y) and (y.min() < 0 or y.max() >= n_classes):
        raise ValueError(f"labels must be class indices 0..{n_classes - 1}")
    gold = dict(gold or {})
    votes = np.zeros((n_tasks, n_classes))
    np.add.at(votes, (t, y), 1.0)
    seen = votes.sum(axis=1)
    posteriors = np.full((n_tasks, n_classes), 1.0 / n_classes)
    posteriors[seen > 0] = votes[seen > 0] / seen[seen > 0, None]
    _pin(posteriors, gold)
    priors = posteriors.mean(axis=0)
    confusion = _m_step(posteriors, t, w, y, n_workers, n_classes)
    iterations = 0
    for iterations in range(1, n_iter + 1):  # noqa: B007 (the count is returned)
        fresh = _e_step(priors, confusion, t, w, y, weight, n_tasks, n_classes)
        _pin(fresh, gold)
        moved = float(np.abs(fresh - posteriors).max()) if n_tasks else 0.0
        posteriors = fresh
        priors = posteriors.mean(axis=0)
        confusion = _m_step(posteriors, t, w, y, n_workers, n_classes)
        if tol is not None and moved <= tol:
            break
    return RaterModel(posteriors, confusion, priors, iterations)


def _pin(posteriors: np.ndarray, gold: Mapping[int, int]) -> None:
    for task, klass in gold.items():
        posteriors[task] = 0.0
        posteriors[task, klass] = 1.0


def _m_step(posteriors, t, w, y, n_workers: int, n_classes: int) -> np.ndarray:
    """confusion[w, true, said]: the expected counts, floored at EPS, normalised over `said`."""
    counts = np.zeros((n_workers, n_classes, n_classes))
    np.add.at(counts, (w, slice(None), y), posteriors[t])
    counts = np.clip(counts, EPS, None)
    return counts / counts.sum(axis=2, keepdims=True)


def _e_step(priors, confusion, t, w, y, weight, n_tasks: int, n_classes: int) -> np.ndarray:
    log_likelihood = np.tile(np.log(np.clip(priors, EPS, None)), (n_tasks, 1))
    np.add.at(log_likelihood, t, np.log(confusion[w, :, y]) * weight[:, None])
    log_likelihood -= log_likelihood.max(axis=1, keepdims=True)
    likelihood = np.exp(log_likelihood)
    return likelihood / likelihood.sum(axis=1, keepdims=True)


def posterior(
    priors: Sequence[float],
    confusions: Sequence[np.ndarray],
    said: Sequence[int],
    weights: Sequence[float] | None = None,
) -> np.ndarray:
    """P(class | the labels `said[i]` of raters with confusion matrices `confusions[i]`), under
    a fitted model: the E-step for one item, e.g. an unlabelled proof's automatic judgements
    (`weights` as in `dawid_skene`)."""
    log_p = np.log(np.clip(np.asarray(priors, dtype=float), EPS, None))
    weights = [1.0] * len(said) if weights is None else weights
    for matrix, label, weight in zip(confusions, said, weights, strict=True):
        column = np.asarray(matrix, dtype=float)[:, label]
        log_p = log_p + weight * np.log(np.clip(column, EPS, None))
    log_p -= log_p.max()
    found = np.exp(log_p)
    return found / found.sum()


@dataclass(frozen=True)
class Interval:
    """A mean and its two-sided interval; sd is the standard deviation the interval's width
    follows (the one `labels_needed` scales)."""

    mean: float
    low: float
    high: float
    n: int
    sd: float

    @property
    def width(self) -> float:
        return self.high - self.low

    def as_dict(self) -> dict:
        return {
            "mean": round(self.mean, 6),
            "low": round(self.low, 6),
            "high": round(self.high, 6),
            "width": round(self.width, 6),
            "n": self.n,
        }


def _z(confidence: float) -> float:
    return NormalDist().inv_cdf(0.5 + confidence / 2)


def t_quantile(confidence: float, df: int) -> float:
    """The two-sided Student t quantile (df degrees of freedom), by the Cornish-Fisher series of
    Abramowitz and Stegun 26.7.5 (within 5e-3 of the exact value at df 3, 2e-4 from df 9; checked against
    scipy in the tests). No scipy at run time."""
    z = _z(confidence)
    v = float(df)
    return (
        z
        + (z**3 + z) / (4 * v)
        + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * v**2)
        + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * v**3)
        + (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / (92160 * v**4)
    )


def bootstrap_mean_interval(
    values: Sequence[float],
    *,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
    small_sample: bool = True,
) -> Interval | None:
    """Percentile bootstrap of the mean of `values` (None with fewer than two). small_sample:
    the expanded percentile bootstrap (Hesterberg 2015): the percentiles are taken at the level
    whose normal quantile is sqrt(n / (n - 1)) t(n - 1), which the plain percentile interval
    under-covers by at small n (about 93% at n = 20)."""
    data = np.asarray(values, dtype=float)
    n = len(data)
    if n < 2:
        return None
    rng = np.random.default_rng(seed)
    means = data[rng.integers(0, n, size=(n_resamples, n))].mean(axis=1)
    alpha = (1 - confidence) / 2
    if small_sample:
        widened = math.sqrt(n / (n - 1)) * t_quantile(confidence, n - 1)
        alpha = 1 - NormalDist().cdf(widened)
    low, high = np.quantile(means, [alpha, 1 - alpha])
    return Interval(float(data.mean()), float(low), float(high), len(data), float(data.std()))


def ppi_mean_interval(
    gold: Sequence[float],
    predicted: Sequence[float],
    unlabelled: Sequence[float],
    *,
    confidence: float = 0.95,
    lam: float | None = None,
    small_sample: bool = True,
) -> Interval | None:
    """PPI++ mean: lam * mean(unlabelled) + mean(gold - lam * predicted), with its normal
    interval. `predicted[i]` is the automatic prediction on the item whose gold value is
    `gold[i]`; `unlabelled` the predictions on items without gold. lam None: the variance-
    minimising value, clipped to [0, 1] (lam 0 is the classical mean of the gold values, lam 1
    plain PPI). None with fewer than two gold values or no unlabelled item. small_sample: the
    rectifier's standard deviation with n - 1 and a t(n - 1) quantile instead of the normal one
    (off: exactly ppi-python's interval)."""
    y = np.asarray(gold, dtype=float)
    yhat = np.asarray(predicted, dtype=float)
    unl = np.asarray(unlabelled, dtype=float)
    if len(y) != len(yhat):
        raise ValueError("gold and predicted must be paired (one prediction per gold value)")
    n, big_n = len(y), len(unl)
    if n < 2 or big_n < 1:
        return None
    if lam is None:
        lam = _power_tuning(y, yhat, unl)
    mean = float(lam * unl.mean() + (y - lam * yhat).mean())
    imputed = (lam * unl).std() / math.sqrt(big_n)
    rectifier = (y - lam * yhat).std(ddof=1 if small_sample else 0) / math.sqrt(n)
    se = math.sqrt(imputed**2 + rectifier**2)
    half = (t_quantile(confidence, n - 1) if small_sample else _z(confidence)) * se
    # the sd of one gold label's worth of information: se = sd / sqrt(n) at this n
    return Interval(mean, mean - half, mean + half, n, se * math.sqrt(n))


def _power_tuning(y: np.ndarray, yhat: np.ndarray, unl: np.ndarray) -> float:
    """The lam that minimises the PPI variance for a mean (as ppi-python computes it)."""
    n, big_n = len(y), len(unl)
    point = unl.mean() + (y - yhat).mean()
    grads, grads_hat = y - point, yhat - point
    cov = 2 * np.mean((grads - grads.mean()) * (grads_hat - grads_hat.mean()))
    every = np.concatenate([yhat, unl]) - point
    var = float(np.var(every, ddof=1)) if len(every) > 1 else 0.0
    if var <= 0:
        return 0.0
    return float(np.clip(cov / (2 * (1 + n / big_n) * var), 0.0, 1.0))


def labels_needed(interval: Interval, width: float, *, confidence: float = 0.95) -> int | None:
    """Gold labels for an interval of `width` (full width, two-sided) at the same spread:
    n = (2 z sd / width)^2, rounded up. None when the spread is unknown (zero)."""
    if width <= 0:
        raise ValueError("width must be positive")
    if interval.sd <= 0:
        return None
    return max(2, math.ceil((2 * _z(confidence) * interval.sd / width) ** 2))


# --- Sampling designs and design-weighted intervals ------------------------------------------
#
# An item's inclusion probability pi is P(it is labelled by experts) under the design that
# chose it. The estimators below weight each labelled item by 1 / pi (Horvitz-Thompson 1952,
# Hajek 1971), so they estimate the mean over EVERY item whatever the design favoured, as long
# as every item had pi > 0. Their variance is cluster-robust: a problem's samples (several
# proofs of one problem) share their errors, so the problems, not the proofs, are the
# independent units (the "with replacement" variance of a cluster sample: the problems are
# taken as drawn from a population of problems, which also covers the generator's mean
# beyond the campaign's proofs).


def pps_probabilities(
    weights: Sequence[float], expected: float, *, uniform_share: float
) -> np.ndarray:
    """Inclusion probabilities for drawing `expected` of n items: a share `uniform_share` of
    the draw spread evenly, the rest proportional to `weights` (uncertainty, >= 0), capped at
    1 with the excess spread over the others (pi_i = min(1, c q_i), q_i = u / n + (1 - u)
    w_i / sum w). With uniform_share > 0 every item has pi > 0 (Zrnic & Candes 2024: mixing
    the uniform rule keeps the inverse weights bounded, by n / (u * expected))."""
    w = np.clip(np.asarray(weights, dtype=float), 0.0, None)
    n = len(w)
    if n == 0:
        return np.zeros(0)
    if expected >= n:
        return np.ones(n)
    if expected <= 0:
        return np.zeros(n)
    u = float(uniform_share)
    total = w.sum()
    q = u / n + (1 - u) * (w / total if total > 0 else np.full(n, 1.0 / n))
    capped = np.zeros(n, dtype=bool)
    pi = np.zeros(n)
    for _ in range(n):
        free = ~capped
        mass = q[free].sum()
        scale = (expected - capped.sum()) / mass if mass > 0 else 0.0
        pi = np.where(capped, 1.0, np.minimum(1.0, scale * q))
        newly = free & (scale * q >= 1.0)
        if not newly.any():
            break
        capped |= newly
    return pi


def pareto_sample(probabilities: Sequence[float], random: Sequence[float], size: int) -> np.ndarray:
    """Pareto pi-ps sampling (Rosen 1997): the `size` items of smallest
    Q_i = U_i (1 - pi_i) / ((1 - U_i) pi_i), U_i the item's permanent random number in (0, 1).
    A fixed-size draw whose inclusion probabilities are pi_i to a close approximation (exact
    for pi_i in {0, 1}); the same numbers give the same draw, and a new pass after new items
    or a new budget keeps most of the earlier one (permanent random numbers). Returns a
    boolean mask."""
    pi = np.asarray(probabilities, dtype=float)
    rnd = np.clip(np.asarray(random, dtype=float), 1e-12, 1 - 1e-12)
    with np.errstate(divide="ignore", invalid="ignore"):
        key = np.where(
            pi >= 1.0, -1.0, np.where(pi <= 0.0, np.inf, rnd * (1 - pi) / ((1 - rnd) * pi))
        )
    chosen = np.zeros(len(pi), dtype=bool)
    if size > 0:
        chosen[np.argsort(key, kind="stable")[:size]] = True
    return chosen


@dataclass(frozen=True)
class DesignInterval(Interval):
    """A design-weighted mean and interval; `clusters`: the problems it rests on; `lam`: the
    weight on the predictions (active PPI; None for the experts-only mean)."""

    clusters: int = 0
    lam: float | None = None
    clipped: bool = False  # cut to the scale's range (`clipped_to`)

    def as_dict(self) -> dict:
        body = super().as_dict()
        body["clusters"] = self.clusters
        body["clipped"] = self.clipped
        if self.lam is not None:
            body["lam"] = round(self.lam, 6)
        return body


def clipped_to(interval: DesignInterval | None, low: float, high: float) -> DesignInterval | None:
    """The interval cut to [low, high], the range the mean cannot leave (a scale's ends): an
    interval that covered the true mean still does, so the cut keeps its coverage and only
    drops values no mean can take. `clipped` says whether anything was cut (the mean too, where
    a prediction-powered correction pushed it past an end); `sd` is kept (the spread
    `labels_needed` scales). None stays None (no interval)."""
    if interval is None:
        return None
    if interval.low >= low and interval.high <= high and low <= interval.mean <= high:
        return interval
    return replace(
        interval,
        mean=min(max(interval.mean, low), high),
        low=min(max(interval.low, low), high),
        high=max(min(interval.high, high), low),
        clipped=True,
    )


def _cluster_sums(values: np.ndarray, clusters: np.ndarray) -> np.ndarray:
    _, index = np.unique(clusters, return_inverse=True)
    sums = np.zeros(index.max() + 1 if len(index) else 0)
    np.add.at(sums, index, values)
    return sums


def _half_width(se: float, clusters: int, confidence: float) -> float:
    # t with (clusters - 1) degrees of freedom: the usual small-sample choice for cluster-robust
    # variances (few problems -> wider)
    return t_quantile(confidence, max(1, clusters - 1)) * se


def effective_clusters(weights: np.ndarray, clusters: np.ndarray) -> float:
    """Kish's effective number of clusters, (sum W_g)^2 / sum W_g^2 over the clusters' total
    weights W_g: unequal design weights make the variance estimate rest on fewer clusters
    than there are, so the t quantile takes its degrees of freedom from this number (at most
    the number of clusters)."""
    totals = _cluster_sums(np.asarray(weights, dtype=float), clusters)
    square = float(np.sum(totals**2))
    return float(np.sum(totals)) ** 2 / square if square > 0 else 0.0


def ipw_mean_interval(
    values: Sequence[float],
    probabilities: Sequence[float],
    clusters: Sequence[object],
    *,
    confidence: float = 0.95,
) -> DesignInterval | None:
    """The Hajek (inverse-probability-weighted) mean of the labelled values, each weighted by
    1 / its inclusion probability, with a cluster-robust (problem) sandwich variance:
    var = G / (G - 1) sum_g (sum_{i in g} w_i (y_i - mean))^2 / (sum w)^2; the same figure as
    statsmodels' WLS of y on a constant with weights w and cov_type "cluster". A t(G* - 1)
    interval, G* the effective number of clusters (`effective_clusters`: G with equal weights). None with fewer than two clusters or a probability that is not in (0, 1]."""
    y = np.asarray(values, dtype=float)
    pi = np.asarray(probabilities, dtype=float)
    groups = np.asarray(clusters)
    if not (len(y) == len(pi) == len(groups)):
        raise ValueError("values, probabilities and clusters must have one entry per label")
    if len(y) == 0 or np.any(~(pi > 0)) or np.any(pi > 1):
        return None
    w = 1.0 / pi
    mean = float(np.sum(w * y) / np.sum(w))
    sums = _cluster_sums(w * (y - mean), groups)
    g = len(sums)
    if g < 2:
        return None
    var = g / (g - 1) * float(np.sum(sums**2)) / float(np.sum(w)) ** 2
    se = math.sqrt(var)
    half = _half_width(se, max(2, math.floor(effective_clusters(w, groups))), confidence)
    return DesignInterval(mean, mean - half, mean + half, len(y), se * math.sqrt(len(y)), g)


def active_ppi_mean_interval(
    labelled: Sequence[bool],
    values: Sequence[float | None],
    predictions: Sequence[float | None],
    probabilities: Sequence[float],
    clusters: Sequence[object],
    *,
    confidence: float = 0.95,
    lam: float | None = None,
) -> DesignInterval | None:
    """Active (inverse-probability-weighted) prediction-powered mean over EVERY item of the
    population (Zrnic & Candes 2024, with the power tuning of PPI++): each item i contributes
        phi_i = lam f_i + (y_i - lam f_i) L_i / pi_i
    (f_i its automatic prediction, 0 where it has none; L_i 1 if labelled, pi_i its inclusion
    probability); the estimate is the mean of phi over the N items, unbiased for the mean of
    y whatever the predictions and lam. Variance cluster-robust over problems
    (G / (G - 1) sum_g (sum_{i in g} (phi_i - mean))^2 / N^2), a t(H* - 1) interval, H* the
    effective number of labelled problems (`effective_clusters` of the labels' weights). lam None: the value minimising that variance (from the cluster sums of
    the two parts of phi),
    clipped to [0, 1]. None with fewer than two clusters, no labelled item, or an item whose
    probability is not in (0, 1]."""
    lab = np.asarray(labelled, dtype=bool)
    pi = np.asarray(probabilities, dtype=float)
    groups = np.asarray(clusters)
    n_items = len(lab)
    if not (n_items == len(values) == len(predictions) == len(pi) == len(groups)):
        raise ValueError("one entry per item in every argument")
    if n_items == 0 or not lab.any() or np.any(~(pi > 0)) or np.any(pi > 1):
        return None
    y = np.array([np.nan if v is None else float(v) for v in values])
    y = np.where(lab, y, 0.0)  # an unlabelled item's value is never read
    if np.isnan(y).any():
        raise ValueError("every labelled item needs a value")
    f = np.array([np.nan if p is None else float(p) for p in predictions])
    f = np.where(np.isnan(f), 0.0, f)  # no prediction: 0 (still unbiased)
    ratio = np.where(lab, 1.0 / pi, 0.0)
    a = y * ratio  # the IPW part
    b = f * (1.0 - ratio)  # the prediction part, times lam
    sa = _cluster_sums(a - a.mean(), groups)
    sb = _cluster_sums(b - b.mean(), groups)
    g = len(sa)
    if g < 2:
        return None
    if lam is None:
        sbb = float(np.sum(sb**2))
        lam = 0.0 if sbb <= 0 else float(np.clip(-np.sum(sa * sb) / sbb, 0.0, 1.0))
    phi = a + lam * b
    mean = float(phi.mean())
    sums = _cluster_sums(phi - mean, groups)
    se = math.sqrt(g / (g - 1) * float(np.sum(sums**2))) / n_items
    # the correction's spread is read from the labelled problems only: their number sets the
    # degrees of freedom (with few labels, t(labelled problems - 1), not the normal quantile)
    labelled_clusters = effective_clusters(1.0 / pi[lab], groups[lab])
    half = _half_width(se, max(2, math.floor(labelled_clusters)), confidence)
    n = int(lab.sum())
    return DesignInterval(mean, mean - half, mean + half, n, se * math.sqrt(n), g, lam)
