"""Rater models beside Dawid-Skene, and the choice between them by held-out calibration, in numpy
(no Django): fitted per campaign by estimation.services.confidence, measured by
benchmarks/bench_confidence.py.

The observations are (tasks[m], workers[m], labels[m]), 0-based indices, as for
`adjudication.estimators.dawid_skene`; `gold` maps a task to its known class (pinned every
round); `weights[m]` tempers an observation's log-likelihood in the E-step (1/k for each of k
automatic raters of an item: one voice). Every model gives the same `RaterModel`: each item's
posterior over the classes and each rater's confusion matrix P(said | true).

Candidates (`CANDIDATES`, each fitted by EM from the majority vote):
- "dawid-skene": a full K x K confusion matrix per rater (`estimators.dawid_skene`);
- "one-coin": one accuracy per rater, a wrong class uniform among the others (Zhang et al. 2016;
  the same updates as crowd-kit's `OneCoinDawidSkene`);
- "ordinal": a discretised normal per rater, two parameters: P(said = s | true = c) =
  Phi((s + 1/2 - c - bias) / sd) - Phi((s - 1/2 - c - bias) / sd), the two end classes open
  (severity `bias`, precision 1 / sd, in class steps); each rater's pair is shrunk towards the
  pooled pair of its group (experts, automatic raters) by a normal prior, so a rater with few
  judgements is read like the others. A near miss is likelier than a far one;
- "ordinal-shrunk": Dawid-Skene whose confusion rows have a Dirichlet prior centred on the
  rater's ordinal matrix (`SHRINK` pseudo-judgements a row): a full matrix where the judgements
  show one, the ordinal shape where they do not;
- "dawid-skene-pooled": Dawid-Skene shrunk towards the pooled confusion matrix of the rater's
  group (Dirichlet prior, `SHRINK` pseudo-judgements a row).
Class priors are smoothed by `PRIOR_ITEMS` pseudo-items a class (except "dawid-skene" and "one-coin",
kept as their references compute them).

`rater_model_choose` fits each candidate k times with a fold of held-out cases hidden:
- a gold item, its known class hidden (its judgements kept): the held-out posterior should put
  its mass on the known class;
- one judgement of an item with at least two expert judgements, removed: the held-out
  posterior, through the rater's confusion, predicts the removed grade;
and chooses the candidate of the least held-out log loss (not the best fit). A double-scored
item's held-out judgement is predicted with the item's gold hidden too (an adjudication of the
two's disagreement would tell the removed grade). The chosen one is fitted on everything; in a
campaign under `BAG_BELOW` items each item's posterior is then averaged over fits to bootstrap
resamples of the items (`bagged`: the plug-in posterior takes the raters' estimated parameters
as known, which a campaign of a few hundred judgements cannot; in a large one the average only
blurs). A temperature T (posterior ∝ posterior^(1/T), 0.5-6) is fitted on the chosen
candidate's held-out cases and applied when there are at least `MIN_CASES` of them. The reliability table and the expected
calibration error (with a bootstrap interval over the cases) are measured on those held-out
cases, each fold's cases tempered by the T fitted on the other folds.

Where this is honest and where not: benchmarks/bench_confidence.py (RESULTS.md) measures it on
campaigns the models do not assume (shared biases, errors that grow with proof length, problems
whose proofs share errors); it misses the targets on the smallest campaigns, and says so.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from adjudication.estimators import EPS, RaterModel, dawid_skene

CANDIDATES = ("dawid-skene", "one-coin", "ordinal", "ordinal-shrunk", "dawid-skene-pooled")
SHRINK = 4.0  # pseudo-judgements a confusion row for the shrunk candidates
PRIOR_ITEMS = 4.0  # pseudo-items a class in the class priors (a Dirichlet prior)
MIN_CASES = 30  # fewer held-out cases: too little evidence to state a calibration error
FOLDS = 5
BINS = 10
TEMPERATURES = np.exp(np.linspace(math.log(0.5), math.log(6.0), 41))
RESAMPLES = 10
BAG_BELOW = 300  # items: smaller campaigns average their posteriors over bootstrap fits
REFIT_ROUNDS = 40  # EM rounds of each held-out and bootstrap fit (from the majority vote)

# the ordinal model's grid: bias in class steps, sd in class steps (log-spaced)
_BIASES = np.round(np.arange(-2.5, 2.5001, 0.125), 6)
_SDS = np.exp(np.linspace(math.log(0.15), math.log(6.0), 30))
_BIAS_SD_PRIOR = 0.25  # how far a rater's bias strays from its group's (normal prior)
_LOG_SD_PRIOR = 0.2  # and its log sd


@dataclass(frozen=True)
class Observations:
    tasks: np.ndarray
    workers: np.ndarray
    labels: np.ndarray
    weights: np.ndarray
    n_tasks: int
    n_workers: int
    n_classes: int
    gold: dict[int, int]
    groups: np.ndarray  # per worker: 0 expert, 1 automatic (pooling and shrinkage groups)

    @classmethod
    def of(
        cls,
        *,
        tasks: Sequence[int],
        workers: Sequence[int],
        labels: Sequence[int],
        n_tasks: int,
        n_workers: int,
        n_classes: int,
        gold: Mapping[int, int] | None = None,
        weights: Sequence[float] | None = None,
        groups: Sequence[int] | None = None,
    ) -> Observations:
        t = np.asarray(tasks, dtype=np.int64)
        w = np.asarray(workers, dtype=np.int64)
        y = np.asarray(labels, dtype=np.int64)
        if not (len(t) == len(w) == len(y)):
            raise ValueError("tasks, workers and labels must have one entry per observation")
        if len(y) and (y.min() < 0 or y.max() >= n_classes):
            raise ValueError(f"labels must be class indices 0..{n_classes - 1}")
        return cls(
            t,
            w,
            y,
            np.ones(len(t)) if weights is None else np.asarray(weights, dtype=float),
            n_tasks,
            n_workers,
            n_classes,
            {int(k): int(v) for k, v in (gold or {}).items()},
            np.zeros(n_workers, dtype=np.int64)
            if groups is None
            else np.asarray(groups, dtype=np.int64),
        )

    def without(self, observations: np.ndarray, gold_tasks: Sequence[int]) -> Observations:
        """The same data with the observations at `observations` removed and the gold of
        `gold_tasks` hidden."""
        keep = np.ones(len(self.tasks), dtype=bool)
        keep[observations] = False
        hidden = set(int(t) for t in gold_tasks)
        return Observations(
            self.tasks[keep],
            self.workers[keep],
            self.labels[keep],
            self.weights[keep],
            self.n_tasks,
            self.n_workers,
            self.n_classes,
            {t: c for t, c in self.gold.items() if t not in hidden},
            self.groups,
        )


# --- the E-step and the counts every candidate shares ---------------------------------------


def _log_likelihood(obs: Observations, confusion: np.ndarray, priors: np.ndarray) -> np.ndarray:
    k = obs.n_classes
    found = np.tile(np.log(np.clip(priors, EPS, None)), (obs.n_tasks, 1))
    logs = np.log(np.clip(confusion[obs.workers, :, obs.labels], EPS, None)) * obs.weights[:, None]
    for c in range(k):
        found[:, c] += np.bincount(obs.tasks, weights=logs[:, c], minlength=obs.n_tasks)
    return found


def _normalise_logs(log_p: np.ndarray) -> np.ndarray:
    log_p = log_p - log_p.max(axis=1, keepdims=True)
    p = np.exp(log_p)
    return p / p.sum(axis=1, keepdims=True)


def _pin(posteriors: np.ndarray, gold: Mapping[int, int]) -> None:
    for task, klass in gold.items():
        posteriors[task] = 0.0
        posteriors[task, klass] = 1.0


def _counts(obs: Observations, posteriors: np.ndarray) -> np.ndarray:
    """counts[w, true, said]: the expected number of times rater w said `said` of a `true` item."""
    k, n_w = obs.n_classes, obs.n_workers
    counts = np.zeros((n_w, k, k))
    cell = obs.workers * k + obs.labels
    for c in range(k):
        counts[:, c, :] = np.bincount(
            cell, weights=posteriors[obs.tasks, c], minlength=n_w * k
        ).reshape(n_w, k)
    return counts


def _majority(obs: Observations) -> np.ndarray:
    votes = np.zeros((obs.n_tasks, obs.n_classes))
    np.add.at(votes, (obs.tasks, obs.labels), 1.0)
    seen = votes.sum(axis=1)
    posteriors = np.full((obs.n_tasks, obs.n_classes), 1.0 / obs.n_classes)
    posteriors[seen > 0] = votes[seen > 0] / seen[seen > 0, None]
    _pin(posteriors, obs.gold)
    return posteriors


def _smoothed_priors(obs: Observations, posteriors: np.ndarray) -> np.ndarray:
    seen = np.zeros(obs.n_tasks, dtype=bool)
    seen[obs.tasks] = True
    seen[list(obs.gold)] = True
    return (posteriors[seen].sum(axis=0) + PRIOR_ITEMS) / (seen.sum() + PRIOR_ITEMS * obs.n_classes)


def _em(obs: Observations, m_step, *, smooth_priors: bool, n_iter: int, tol: float | None):
    posteriors = _majority(obs)
    priors = _smoothed_priors(obs, posteriors) if smooth_priors else posteriors.mean(axis=0)
    confusion = m_step(obs, posteriors)
    iterations = 0
    for iterations in range(1, n_iter + 1):  # noqa: B007 (the count is returned)
        fresh = _normalise_logs(_log_likelihood(obs, confusion, priors))
        _pin(fresh, obs.gold)
        moved = float(np.abs(fresh - posteriors).max()) if obs.n_tasks else 0.0
        posteriors = fresh
        priors = _smoothed_priors(obs, posteriors) if smooth_priors else posteriors.mean(axis=0)
        confusion = m_step(obs, posteriors)
        if tol is not None and moved <= tol:
            break
    return RaterModel(posteriors, confusion, priors, iterations)


# --- one-coin --------------------------------------------------------------------------------


def _one_coin_m_step(obs: Observations, posteriors: np.ndarray) -> np.ndarray:
    k = obs.n_classes
    hits = np.bincount(
        obs.workers, weights=posteriors[obs.tasks, obs.labels], minlength=obs.n_workers
    )
    seen = np.bincount(obs.workers, minlength=obs.n_workers)
    skill = np.where(seen > 0, hits / np.maximum(seen, 1), 1.0 / k)
    confusion = np.repeat(((1 - skill) / (k - 1))[:, None, None], k, axis=1).repeat(k, axis=2)
    confusion[:, np.arange(k), np.arange(k)] = skill[:, None]
    return np.clip(confusion, EPS, 1 - EPS)


# --- ordinal ---------------------------------------------------------------------------------


def _phi(x: np.ndarray) -> np.ndarray:
    """The standard normal cdf, vectorised: erf by Abramowitz and Stegun 7.1.26 (absolute error
    below 1.5e-7; no scipy at run time)."""
    z = np.abs(x) / math.sqrt(2.0)
    t = 1.0 / (1.0 + 0.3275911 * z)
    poly = t * (
        0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))
    )
    erf = 1.0 - poly * np.exp(-z * z)
    return 0.5 * (1.0 + np.sign(x) * erf)


def discretised_normal(n_classes: int, bias: float, sd: float) -> np.ndarray:
    """The ordinal confusion matrix [true, said]: a judgement is true + bias + N(0, sd^2),
    rounded to the nearest class, the end classes open."""
    return _discretised(n_classes, np.array([bias]), np.array([sd]))[0]


def _discretised(n_classes: int, biases: np.ndarray, sds: np.ndarray) -> np.ndarray:
    """[len(biases), true, said] for each (bias, sd) pair."""
    k = n_classes
    c = np.arange(k)[:, None]
    edges = np.arange(k + 1)[None, :] - 0.5  # said s between s - 1/2 and s + 1/2
    z = (edges[None] - c[None] - biases[:, None, None]) / sds[:, None, None]
    cdf = _phi(z)
    cdf[:, :, 0] = 0.0
    cdf[:, :, -1] = 1.0
    return np.clip(np.diff(cdf, axis=2), EPS, None)


@lru_cache(maxsize=16)
def _ordinal_grid(n_classes: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The grid's (bias, log sd) pairs and log P(said | true) for each, flattened and transposed
    [K * K, G] (contiguous: the product with the counts is the M-step's whole cost)."""
    biases, sds = np.meshgrid(_BIASES, _SDS, indexing="ij")
    biases, sds = biases.ravel(), sds.ravel()
    logs = np.log(_discretised(n_classes, biases, sds)).reshape(len(biases), -1)
    return biases, np.log(sds), np.ascontiguousarray(logs.T)


def _ordinal_parameters(obs: Observations, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per rater, the grid's (bias, sd) of the greatest posterior: the expected log-likelihood of
    its counts plus a normal prior centred on its group's pooled best pair."""
    biases, log_sds, logs = _ordinal_grid(obs.n_classes)
    flat = counts.reshape(obs.n_workers, -1)
    fit = flat @ logs  # [W, G]
    chosen = np.zeros(obs.n_workers, dtype=np.int64)
    for group in np.unique(obs.groups):
        members = np.flatnonzero(obs.groups == group)
        centre = int(np.argmax(flat[members].sum(axis=0) @ logs))
        penalty = ((biases - biases[centre]) / _BIAS_SD_PRIOR) ** 2 / 2 + (
            (log_sds - log_sds[centre]) / _LOG_SD_PRIOR
        ) ** 2 / 2
        chosen[members] = np.argmax(fit[members] - penalty[None, :], axis=1)
    return biases[chosen], np.exp(log_sds[chosen])


def _ordinal_m_step(obs: Observations, posteriors: np.ndarray) -> np.ndarray:
    biases, sds = _ordinal_parameters(obs, _counts(obs, posteriors))
    return _discretised(obs.n_classes, biases, sds)


def _ordinal_shrunk_m_step(obs: Observations, posteriors: np.ndarray) -> np.ndarray:
    counts = _counts(obs, posteriors)
    biases, sds = _ordinal_parameters(obs, counts)
    shape = _discretised(obs.n_classes, biases, sds)
    counts = counts + SHRINK * shape
    return counts / counts.sum(axis=2, keepdims=True)


def _pooled_m_step(obs: Observations, posteriors: np.ndarray) -> np.ndarray:
    counts = _counts(obs, posteriors)
    shrunk = counts.copy()
    for group in np.unique(obs.groups):
        members = obs.groups == group
        pooled = counts[members].sum(axis=0) + 1.0 / obs.n_classes
        pooled = pooled / pooled.sum(axis=1, keepdims=True)
        shrunk[members] += SHRINK * pooled[None]
    shrunk = np.clip(shrunk, EPS, None)
    return shrunk / shrunk.sum(axis=2, keepdims=True)


def rater_model_fit(
    candidate: str, obs: Observations, *, n_iter: int = 100, tol: float | None = 1e-5
) -> RaterModel:
    """Fits one of `CANDIDATES` to the observations. "one-coin": rater w is right with
    probability skill[w] (the mean posterior of the classes it gave), a wrong class any other
    with equal chance, the matrix clipped to [EPS, 1 - EPS] as crowd-kit's `OneCoinDawidSkene`
    does; "ordinal": the module's ordinal model, its M-step exact on the grid of biases
    -2.5..2.5 (step 0.125) and sds 0.15..6 (30 log-spaced), in class steps."""
    if candidate == "dawid-skene":
        return dawid_skene(
            tasks=obs.tasks,
            workers=obs.workers,
            labels=obs.labels,
            n_tasks=obs.n_tasks,
            n_workers=obs.n_workers,
            n_classes=obs.n_classes,
            gold=obs.gold,
            weights=obs.weights,
            n_iter=n_iter,
            tol=tol,
        )
    steps = {
        "one-coin": (_one_coin_m_step, False),
        "ordinal": (_ordinal_m_step, True),
        "ordinal-shrunk": (_ordinal_shrunk_m_step, True),
        "dawid-skene-pooled": (_pooled_m_step, True),
    }
    if candidate not in steps:
        raise ValueError(f"unknown rater model {candidate!r}; one of {', '.join(CANDIDATES)}")
    m_step, smooth = steps[candidate]
    return _em(obs, m_step, smooth_priors=smooth, n_iter=n_iter, tol=tol)


# --- held-out calibration --------------------------------------------------------------------


@dataclass(frozen=True)
class HeldOut:
    """The held-out cases of one candidate: for each case, its kind ("gold" or "judgement"),
    the predicted distribution over the classes and the class that came."""

    kinds: np.ndarray
    predicted: np.ndarray  # [cases, K], before tempering
    outcomes: np.ndarray
    folds: np.ndarray
    log_posteriors: np.ndarray  # [cases, K]: the held-out item's log posterior
    confusions: np.ndarray  # [cases, K, K]: the rater's matrix (gold: the identity)

    def log_loss(self) -> float:
        p = self.predicted[np.arange(len(self.outcomes)), self.outcomes]
        return float(-np.log(np.clip(p, EPS, None)).mean())


def heldout_cases(obs: Observations, *, expert_group: int = 0, seed: int = 0):
    """The held-out cases: every gold task (its gold hidden), and for each task with at least
    two judgements by raters of `expert_group`, one of them (chosen at random), removed. Returns
    (gold tasks, removed observation indices)."""
    rng = np.random.default_rng(seed)
    gold_tasks = np.array(sorted(obs.gold), dtype=np.int64)
    expert = np.flatnonzero(obs.groups[obs.workers] == expert_group)
    by_task: dict[int, list[int]] = {}
    for m in expert:
        by_task.setdefault(int(obs.tasks[m]), []).append(int(m))
    removed = np.array(
        [int(rng.choice(ms)) for t, ms in sorted(by_task.items()) if len(ms) >= 2],
        dtype=np.int64,
    )
    return gold_tasks, removed


def heldout_predictions(
    candidate: str,
    obs: Observations,
    gold_tasks: np.ndarray,
    removed: np.ndarray,
    *,
    folds: int = FOLDS,
    seed: int = 0,
    n_iter: int = 100,
) -> HeldOut:
    """Fits `candidate` once a fold with that fold's cases hidden, and predicts each."""
    n_gold, n_removed = len(gold_tasks), len(removed)
    n = n_gold + n_removed
    k = obs.n_classes
    fold = np.random.default_rng(seed).permutation(n) % max(1, min(folds, n))
    predicted = np.zeros((n, k))
    log_post = np.zeros((n, k))
    confusions = np.zeros((n, k, k))
    outcomes = np.zeros(n, dtype=np.int64)
    kinds = np.array(["gold"] * n_gold + ["judgement"] * n_removed)
    for f in np.unique(fold):
        cases = np.flatnonzero(fold == f)
        gold_cases = cases[cases < n_gold]
        judgement_cases = cases[cases >= n_gold]
        hidden_gold = gold_tasks[gold_cases]
        hidden_obs = removed[judgement_cases - n_gold]
        # a double-scored item's gold (an adjudication of the two's disagreement) is hidden with
        # its removed judgement: the remaining judgements alone must predict it
        hidden = np.concatenate([hidden_gold, obs.tasks[hidden_obs]])
        model = rater_model_fit(candidate, obs.without(hidden_obs, hidden), n_iter=n_iter)
        logs = np.log(np.clip(model.posteriors, EPS, None))
        for case, task in zip(gold_cases, hidden_gold, strict=True):
            log_post[case] = logs[task]
            confusions[case] = np.eye(k)
            outcomes[case] = obs.gold[int(task)]
        for case, m in zip(judgement_cases, hidden_obs, strict=True):
            log_post[case] = logs[obs.tasks[m]]
            confusions[case] = model.confusion[obs.workers[m]]
            outcomes[case] = obs.labels[m]
    for case in range(n):
        predicted[case] = _normalise_logs(log_post[case][None])[0] @ confusions[case]
    return HeldOut(kinds, predicted, outcomes, fold, log_post, confusions)


def resampled(obs: Observations, rng: np.random.Generator) -> Observations:
    """A bootstrap resample of the tasks (each drawn copy a task of its own, with its
    observations and gold)."""
    pick = rng.integers(0, obs.n_tasks, obs.n_tasks)
    order = np.argsort(obs.tasks, kind="stable")
    starts = np.searchsorted(obs.tasks[order], np.arange(obs.n_tasks + 1))
    sizes = starts[pick + 1] - starts[pick]
    copy = np.repeat(np.arange(obs.n_tasks), sizes)
    offsets = np.arange(sizes.sum()) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    rows = order[np.repeat(starts[pick], sizes) + offsets]
    gold = {int(n): obs.gold[int(t)] for n, t in enumerate(pick) if int(t) in obs.gold}
    return Observations(
        copy,
        obs.workers[rows],
        obs.labels[rows],
        obs.weights[rows],
        obs.n_tasks,
        obs.n_workers,
        obs.n_classes,
        gold,
        obs.groups,
    )


def bagged(
    candidate: str, obs: Observations, *, resamples: int, seed: int = 0, n_iter: int = 100
) -> np.ndarray:
    """Each task's posterior averaged over fits to `resamples` bootstrap resamples of the tasks
    (each fit's raters and priors read every task): the plug-in posterior treats the raters'
    estimated parameters as known, which a small campaign cannot; their spread over resamples
    is what it does not know."""
    rng = np.random.default_rng(seed)
    total = np.zeros((obs.n_tasks, obs.n_classes))
    for _ in range(resamples):
        model = rater_model_fit(candidate, resampled(obs, rng), n_iter=n_iter)
        found = _normalise_logs(_log_likelihood(obs, model.confusion, model.priors))
        _pin(found, obs.gold)
        total += found
    return total / resamples


def _tempered(held: HeldOut, temperature: float, cases: np.ndarray) -> np.ndarray:
    posts = _normalise_logs(held.log_posteriors[cases] / temperature)
    return np.einsum("nc,ncs->ns", posts, held.confusions[cases])


def _temperature(held: HeldOut, cases: np.ndarray) -> float:
    """The temperature of the least log loss on `cases` (1 without cases)."""
    if not len(cases):
        return 1.0
    outcomes = held.outcomes[cases]
    losses = [
        -np.log(
            np.clip(_tempered(held, t, cases)[np.arange(len(cases)), outcomes], EPS, None)
        ).sum()
        for t in TEMPERATURES
    ]
    return float(TEMPERATURES[int(np.argmin(losses))])


@dataclass(frozen=True)
class Calibration:
    """Reliability on held-out cases: each case's stated confidence (the probability of the
    predicted class) and whether the predicted class came."""

    confidence: np.ndarray
    hit: np.ndarray
    kinds: np.ndarray

    def rows(self, bins: int = BINS) -> list[dict]:
        """Per bin of stated confidence (equal widths): the cases, their mean confidence and the
        share that came."""
        found = []
        index = np.minimum((self.confidence * bins).astype(int), bins - 1)
        for b in range(bins):
            inside = index == b
            if inside.any():
                found.append(
                    {
                        "low": b / bins,
                        "high": (b + 1) / bins,
                        "n": int(inside.sum()),
                        "confidence": round(float(self.confidence[inside].mean()), 6),
                        "accuracy": round(float(self.hit[inside].mean()), 6),
                    }
                )
        return found

    def ece(self) -> float | None:
        return expected_calibration_error(self.confidence, self.hit)

    def ece_interval(self, *, n_resamples: int = 1000, seed: int = 0) -> tuple[float, float] | None:
        return ece_bootstrap_interval(self.confidence, self.hit, n_resamples=n_resamples, seed=seed)


def expected_calibration_error(confidence, hit, bins: int = BINS) -> float | None:
    """ECE: the bins' |mean confidence - share right|, weighted by their share of the cases
    (equal-width bins; None without cases)."""
    confidence = np.asarray(confidence, dtype=float)
    hit = np.asarray(hit, dtype=float)
    if not len(confidence):
        return None
    index = np.minimum((confidence * bins).astype(int), bins - 1)
    n = np.bincount(index, minlength=bins)
    gap = np.abs(
        np.bincount(index, weights=confidence, minlength=bins)
        - np.bincount(index, weights=hit, minlength=bins)
    )
    return float(gap.sum() / n.sum())


def ece_bootstrap_interval(
    confidence, hit, *, bins: int = BINS, n_resamples: int = 1000, seed: int = 0, level=0.95
) -> tuple[float, float] | None:
    """A 95% bootstrap interval of the ECE, resampling cases (None with fewer than two). The
    plug-in ECE reads high on few cases (each bin's |stated - came| takes the noise's size),
    and a resample's more so: the percentile interval of the resamples then lies above the
    estimate, even wholly (a test found 0.047 against [0.053, 0.080]). The resamples are
    shifted by their mean's excess over the estimate first, so the interval gives the
    estimate's spread around itself (floored at 0)."""
    confidence = np.asarray(confidence, dtype=float)
    hit = np.asarray(hit, dtype=float)
    n = len(confidence)
    if n < 2:
        return None
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n, size=(n_resamples, n))
    index = np.minimum((confidence * bins).astype(int), bins - 1)
    rows = np.repeat(np.arange(n_resamples), n)
    cells = rows * bins + index[draws].ravel()
    size = n_resamples * bins
    conf = np.bincount(cells, weights=confidence[draws].ravel(), minlength=size)
    hits = np.bincount(cells, weights=hit[draws].ravel(), minlength=size)
    eces = np.abs(conf - hits).reshape(n_resamples, bins).sum(axis=1) / n
    eces -= eces.mean() - expected_calibration_error(confidence, hit, bins)
    low, high = np.quantile(eces, [(1 - level) / 2, 1 - (1 - level) / 2])
    return max(float(low), 0.0), float(high)


@dataclass(frozen=True)
class Choice:
    """The chosen candidate, fitted on every observation with its temperature applied; the
    held-out log loss of each candidate; the chosen one's held-out calibration."""

    candidate: str
    model: RaterModel
    temperature: float
    scores: dict[str, float]
    calibration: Calibration
    cases: int
    gold_cases: int
    judgement_cases: int
    raw_posteriors: np.ndarray = field(repr=False)

    @property
    def enough(self) -> bool:
        return self.cases >= MIN_CASES


def temper(posteriors: np.ndarray, temperature: float, gold: Mapping[int, int]) -> np.ndarray:
    """posterior^(1/T), normalised; gold rows stay pinned."""
    if temperature == 1.0:
        return posteriors
    fresh = _normalise_logs(np.log(np.clip(posteriors, EPS, None)) / temperature)
    _pin(fresh, gold)
    return fresh


def rater_model_choose(
    obs: Observations,
    *,
    candidates: Sequence[str] = CANDIDATES,
    folds: int = FOLDS,
    seed: int = 0,
    default: str = "ordinal",
    n_iter: int = 100,
    resamples: int = RESAMPLES,
    bag_below: int = BAG_BELOW,
) -> Choice:
    """Chooses among `candidates` by held-out log loss (`default` when there is no held-out
    case), fits it on everything (the raters' matrices), averages each task's posterior over
    `resamples` bootstrap fits when the campaign has fewer than `bag_below` items (`bagged`;
    else the plug-in posterior), tempers it (at least MIN_CASES cases) and measures its
    held-out calibration (see the module's docstring)."""
    gold_tasks, removed = heldout_cases(obs, seed=seed)
    n = len(gold_tasks) + len(removed)
    scores: dict[str, float] = {}
    held: dict[str, HeldOut] = {}
    if n:
        for candidate in candidates:
            held[candidate] = heldout_predictions(
                candidate,
                obs,
                gold_tasks,
                removed,
                folds=folds,
                seed=seed,
                n_iter=min(n_iter, REFIT_ROUNDS),
            )
            scores[candidate] = round(held[candidate].log_loss(), 6)
        chosen = min(candidates, key=lambda c: (scores[c], candidates.index(c)))
    else:
        chosen = default if default in candidates else candidates[0]
    model = rater_model_fit(chosen, obs, n_iter=n_iter)
    temperature = 1.0
    confidence = np.zeros(0)
    hit = np.zeros(0, dtype=bool)
    kinds = np.zeros(0, dtype=str)
    if n:
        h = held[chosen]
        predicted = np.zeros_like(h.predicted)
        for f in np.unique(h.folds):
            inside = np.flatnonzero(h.folds == f)
            others = np.flatnonzero(h.folds != f)
            t = _temperature(h, others) if n >= MIN_CASES else 1.0
            predicted[inside] = _tempered(h, t, inside)
        confidence = predicted.max(axis=1)
        hit = predicted.argmax(axis=1) == h.outcomes
        kinds = h.kinds
        if n >= MIN_CASES:
            temperature = _temperature(h, np.arange(n))
    averaged = (
        bagged(chosen, obs, resamples=resamples, seed=seed, n_iter=min(n_iter, REFIT_ROUNDS))
        if resamples and obs.n_tasks < bag_below
        else model.posteriors
    )
    posteriors = temper(averaged, temperature, obs.gold)
    return Choice(
        candidate=chosen,
        model=RaterModel(posteriors, model.confusion, model.priors, model.iterations),
        temperature=temperature,
        scores=scores,
        calibration=Calibration(confidence, hit, kinds),
        cases=n,
        gold_cases=len(gold_tasks),
        judgement_cases=len(removed),
        raw_posteriors=model.posteriors,
    )
