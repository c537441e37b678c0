"""The Bradley-Terry model of pairwise preferences, in numpy: P(i beats j) = 1 / (1 + e^(s_j - s_i)).

`bt_fit` finds the maximum a-posteriori log-strengths under an isotropic Gaussian prior of
variance 1 / `alpha` (the ridge that keeps a proof that won every comparison finite; `alpha`
-> 0 is the maximum-likelihood fit), by Newton's method on the penalised log-likelihood. A tie
counts as half a win each way (the usual reading when a model without a tie parameter is fitted).
The intervals come from the Fisher information at the fit: the inverse of the penalised
log-likelihood's negative Hessian is the covariance of the scores, and a score's 95% interval is
s +- 1.96 se. Tested against `choix.opt_pairwise` (the same MAP estimate) in
tests/annotation/test_bradley_terry.py.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from dataclasses import dataclass

import numpy as np

Z95 = 1.959963984540054
DEFAULT_ALPHA = 0.1


@dataclass(frozen=True)
class BTScore:
    key: Hashable
    score: float
    low: float
    high: float
    wins: float
    comparisons: int


def bt_fit(
    n_items: int,
    outcomes: Iterable[tuple[int, int, float]],
    *,
    alpha: float = DEFAULT_ALPHA,
    max_iter: int = 100,
    tol: float = 1e-10,
) -> tuple[np.ndarray, np.ndarray]:
    """Log-strengths and their covariance from `(i, j, w)` outcomes: `w` is i's share of the
    comparison (1: i won, 0: j won, 0.5: a tie). Returns `(scores, covariance)`."""
    if alpha <= 0:
        raise ValueError("alpha must be positive (the prior keeps an unbeaten item finite)")
    wins = np.zeros((n_items, n_items))
    for i, j, w in outcomes:
        wins[i, j] += w
        wins[j, i] += 1.0 - w
    games = wins + wins.T
    theta = np.zeros(n_items)
    for _ in range(max_iter):
        p = 1.0 / (1.0 + np.exp(theta[None, :] - theta[:, None]))  # p[i, j] = P(i beats j)
        grad = wins.sum(axis=1) - (games * p).sum(axis=1) - alpha * theta
        weight = games * p * p.T
        hessian = weight - np.diag(weight.sum(axis=1)) - alpha * np.eye(n_items)
        step = np.linalg.solve(hessian, grad)
        theta = theta - step
        if np.max(np.abs(step)) < tol:
            break
    p = 1.0 / (1.0 + np.exp(theta[None, :] - theta[:, None]))
    weight = games * p * p.T
    information = np.diag(weight.sum(axis=1)) - weight + alpha * np.eye(n_items)
    return theta, np.linalg.inv(information)


def bt_scores(
    comparisons: Iterable[tuple[Hashable, Hashable, float]], *, alpha: float = DEFAULT_ALPHA
) -> list[BTScore]:
    """Each key's score with its 95% interval from `(x, y, w)` comparisons (w: x's share), the
    best first. Comparisons of a key with itself are dropped."""
    rows = [(x, y, float(w)) for x, y, w in comparisons if x != y]
    keys = sorted({k for x, y, _ in rows for k in (x, y)}, key=str)
    if not keys:
        return []
    index = {k: n for n, k in enumerate(keys)}
    theta, cov = bt_fit(len(keys), [(index[x], index[y], w) for x, y, w in rows], alpha=alpha)
    se = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    won = dict.fromkeys(keys, 0.0)
    played = dict.fromkeys(keys, 0)
    for x, y, w in rows:
        won[x] += w
        won[y] += 1.0 - w
        played[x] += 1
        played[y] += 1
    scores = [
        BTScore(
            key=k,
            score=float(theta[n]),
            low=float(theta[n] - Z95 * se[n]),
            high=float(theta[n] + Z95 * se[n]),
            wins=won[k],
            comparisons=played[k],
        )
        for n, k in enumerate(keys)
    ]
    return sorted(scores, key=lambda s: (-s.score, str(s.key)))
