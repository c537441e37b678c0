"""Simulated grading campaigns whose truth is known, shaped as labs run them and NOT as the rater
models assume: numpy only, seeded, imported by benchmarks/bench_confidence.py (the full sweep)
and by tests/estimation/test_simulated_confidence.py (a few cells).

A campaign (`simulate`), on a scale of `classes` steps (0-7 by default):
- problems with `samples` proofs each (drawn from the range); a problem has a mean level
  (uniform over the scale) and its proofs' true classes scatter around it (sd 1.5 steps);
- `experts` experts, each with an accuracy drawn from `accuracy` and a severity (bias) drawn
  from +-`severity` steps; a judgement is the truth + bias + a normal error (its sd solved so the
  expert is right with its accuracy away from the scale's ends), rounded, clipped: errors one or
  two steps away, more often on the side of the expert's severity;
- with `shared_bias`, experts 0 and 1 share their severity and half the variance of their error
  on a proof they both grade (they err together; the models assume they err independently);
- each proof gets one expert at random and, with chance `double`, a second one; expert labels
  in all: `labels`;
- the final label: the expert's grade (single), the two's grade when they agree, otherwise an
  adjudication to the truth (gold); `gold` of the proofs are also planted gold items (known);
- `graders` automatic graders (one voice, weights 1/k), judging every proof with the truth +
  bias + an error whose sd grows with the proof's length (0.4 + 1.6 x length, length uniform
  0-1), a share of which is common to the graders (sd 0.5) and another common to a problem's
  proofs (sd 0.6): the machines' errors are neither independent nor of one size.
`measure` fits the rater model (`adjudication.rater_models.rater_model_choose`) to campaigns of
a shape and pools, over the non-gold labels, the stated confidence of each label against
whether it is right.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from adjudication.rater_models import (
    Observations,
    expected_calibration_error,
    rater_model_choose,
)

PHI = NormalDist().cdf


@dataclass(frozen=True)
class Shape:
    labels: int = 500
    experts: int = 4
    samples: tuple[int, int] = (1, 16)
    double: float = 0.4
    accuracy: tuple[float, float] = (0.5, 0.8)
    severity: float = 0.35
    shared_bias: bool = True
    graders: int = 2
    gold: float = 0.05
    classes: int = 8

    def title(self) -> str:
        low, high = self.samples
        samples = f"{low}" if low == high else f"{low}-{high}"
        return f"{self.labels} labels, {self.experts} experts, {samples} samples a problem"


@dataclass(frozen=True)
class Campaign:
    truth: np.ndarray
    final: np.ndarray
    is_gold: np.ndarray
    obs: Observations


def _error_sd(accuracy: float, bias: float) -> float:
    """The sd of a normal error for which |bias + error| < 1/2 with chance `accuracy`."""
    low, high = 1e-3, 20.0
    for _ in range(60):
        mid = (low + high) / 2
        right = PHI((0.5 - bias) / mid) - PHI((-0.5 - bias) / mid)
        low, high = (mid, high) if right > accuracy else (low, mid)
    return (low + high) / 2


def simulate(shape: Shape, seed: int) -> Campaign:
    rng = np.random.default_rng(seed)
    k = shape.classes
    n = max(2, round(shape.labels / (1 + shape.double)))
    problem_of = []
    while len(problem_of) < n:
        size = int(rng.integers(shape.samples[0], shape.samples[1] + 1))
        problem_of += [len(set(problem_of))] * size
    problem = np.array(problem_of[:n])
    level = rng.uniform(0, k - 1, problem.max() + 1)
    truth = np.clip(np.rint(level[problem] + rng.normal(0, 1.5, n)), 0, k - 1).astype(int)

    accuracy = rng.uniform(*shape.accuracy, shape.experts)
    bias = rng.uniform(-shape.severity, shape.severity, shape.experts)
    if shape.shared_bias and shape.experts >= 2:
        bias[1] = bias[0] = shape.severity * (1 if rng.random() < 0.5 else -1)
    sd = np.array([_error_sd(a, b) for a, b in zip(accuracy, bias, strict=True)])
    common = rng.normal(0, 1, n)

    def grade(t: int, e: int) -> int:
        own = rng.normal()
        z = (
            math.sqrt(0.5) * common[t] + math.sqrt(0.5) * own
            if shape.shared_bias and e < 2
            else own
        )
        return int(np.clip(np.rint(truth[t] + bias[e] + sd[e] * z), 0, k - 1))

    tasks, workers, labels = [], [], []
    final = np.empty(n, dtype=int)
    is_gold = np.zeros(n, dtype=bool)
    for t in range(n):
        first = int(rng.integers(shape.experts))
        said = grade(t, first)
        tasks.append(t), workers.append(first), labels.append(said)
        final[t] = said
        if rng.random() < shape.double:
            second = int((first + 1 + rng.integers(shape.experts - 1)) % shape.experts)
            other = grade(t, second)
            tasks.append(t), workers.append(second), labels.append(other)
            if other != said:
                final[t], is_gold[t] = truth[t], True
    planted = rng.random(n) < shape.gold
    final[planted], is_gold[planted] = truth[planted], True

    weights = [1.0] * len(tasks)
    if shape.graders:
        length = rng.uniform(0, 1, n)
        shared = rng.normal(0, 0.5, n) + rng.normal(0, 0.6, problem.max() + 1)[problem]
        for g in range(shape.graders):
            value = truth + rng.uniform(-0.5, 0.5) + shared + rng.normal(0, 0.4 + 1.6 * length)
            said = np.clip(np.rint(value), 0, k - 1).astype(int)
            tasks += list(range(n))
            workers += [shape.experts + g] * n
            labels += said.tolist()
            weights += [1.0 / shape.graders] * n
    obs = Observations.of(
        tasks=tasks,
        workers=workers,
        labels=labels,
        n_tasks=n,
        n_workers=shape.experts + shape.graders,
        n_classes=k,
        gold={int(t): int(truth[t]) for t in np.flatnonzero(is_gold)},
        weights=weights,
        groups=[0] * shape.experts + [1] * shape.graders,
    )
    return Campaign(truth, final, is_gold, obs)


@dataclass(frozen=True)
class Measured:
    shape: Shape
    campaigns: int
    labels: int
    confident: int  # labels stated at least 0.9
    confident_right: float | None
    ece: float
    mean_confidence: float
    accuracy: float
    chosen: dict[str, int]
    seconds_per_fit: float

    @property
    def passes(self) -> bool:
        right = self.confident_right is None or self.confident_right >= 0.87
        return right and self.ece <= 0.05


def measure(shape: Shape, *, seeds: range, **choose) -> Measured:
    import time

    confidence, right, chosen = [], [], {}
    seconds = 0.0
    for seed in seeds:
        campaign = simulate(shape, seed)
        started = time.perf_counter()
        choice = rater_model_choose(campaign.obs, seed=seed, **choose)
        seconds += time.perf_counter() - started
        chosen[choice.candidate] = chosen.get(choice.candidate, 0) + 1
        labelled = np.flatnonzero(~campaign.is_gold)
        confidence.append(choice.model.posteriors[labelled, campaign.final[labelled]])
        right.append(campaign.final[labelled] == campaign.truth[labelled])
    conf = np.concatenate(confidence)
    hit = np.concatenate(right)
    high = conf >= 0.9
    return Measured(
        shape=shape,
        campaigns=len(seeds),
        labels=len(conf),
        confident=int(high.sum()),
        confident_right=float(hit[high].mean()) if high.any() else None,
        ece=float(expected_calibration_error(conf, hit)),
        mean_confidence=float(conf.mean()),
        accuracy=float(hit.mean()),
        chosen=chosen,
        seconds_per_fit=seconds / len(seeds),
    )


def measure_before(shape: Shape, seeds: range) -> tuple[float | None, float]:
    """The plain Dawid-Skene the fit used before issue 33, on the same campaigns: the share of
    labels stated at least 0.9 that were right (None when none was) and the calibration error."""
    from adjudication.estimators import dawid_skene

    conf, right = [], []
    for seed in seeds:
        c = simulate(shape, seed)
        o = c.obs
        model = dawid_skene(
            tasks=o.tasks,
            workers=o.workers,
            labels=o.labels,
            weights=o.weights,
            n_tasks=o.n_tasks,
            n_workers=o.n_workers,
            n_classes=o.n_classes,
            gold=o.gold,
        )
        labelled = np.flatnonzero(~c.is_gold)
        conf.append(model.posteriors[labelled, c.final[labelled]])
        right.append(c.final[labelled] == c.truth[labelled])
    conf, right = np.concatenate(conf), np.concatenate(right)
    high = conf >= 0.9
    return (
        float(right[high].mean()) if high.any() else None,
        float(expected_calibration_error(conf, right)),
    )
