"""The Bradley-Terry fit (annotation.bradley_terry, numpy Newton) against choix's MAP estimate
(`choix.opt_pairwise`, a dev extra): the same scores; ties as half wins; the Fisher intervals
against the inverse of choix's own Hessian."""

import numpy as np
import pytest

choix = pytest.importorskip("choix")

from annotation.bradley_terry import bt_fit, bt_scores  # noqa: E402


def _data(seed: int, n: int = 6, games: int = 120):
    rng = np.random.default_rng(seed)
    strength = rng.normal(0, 1, n)
    pairs = []
    for _ in range(games):
        i, j = rng.choice(n, 2, replace=False)
        p = 1 / (1 + np.exp(strength[j] - strength[i]))
        pairs.append((i, j) if rng.random() < p else (j, i))
    return [(int(w), int(lose)) for w, lose in pairs]


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("alpha", [0.01, 0.5])
def test_scores_match_choix_map_estimate(seed, alpha):
    data = _data(seed)
    ours, _ = bt_fit(6, [(w, lose, 1.0) for w, lose in data], alpha=alpha)
    # choix's penalty is alpha * |theta|^2 (prior variance 1 / (2 alpha)); ours alpha / 2
    reference = choix.opt_pairwise(6, data, alpha=alpha / 2, tol=1e-12)
    np.testing.assert_allclose(ours, reference, atol=1e-6)


def test_a_tie_is_half_a_win_each_way():
    data = _data(5, n=4, games=40)
    ties = [(0, 1), (2, 3), (1, 3)]
    ours, _ = bt_fit(
        4, [(w, lose, 1.0) for w, lose in data] + [(i, j, 0.5) for i, j in ties], alpha=0.2
    )
    # the same likelihood with every comparison counted twice, a tie as one win each way
    doubled = [p for p in data for _ in (0, 1)] + [x for i, j in ties for x in ((i, j), (j, i))]
    reference = choix.opt_pairwise(4, doubled, alpha=0.2, tol=1e-12)  # 2x data, 2x penalty
    np.testing.assert_allclose(ours, reference, atol=1e-6)


def test_fisher_interval_is_the_inverse_of_the_reference_hessian():
    data = _data(7)
    ours, cov = bt_fit(6, [(w, lose, 1.0) for w, lose in data], alpha=0.3)
    fcts = choix.opt.PairwiseFcts(data, 0.15)
    np.testing.assert_allclose(cov, np.linalg.inv(fcts.hessian(ours)), atol=1e-8)


def test_scores_sorted_with_intervals_and_unbeaten_item_finite():
    scores = bt_scores([("x", "y", 1.0), ("x", "z", 1.0), ("y", "z", 0.5), ("x", "x", 1.0)])
    assert [s.key for s in scores] == ["x", "y", "z"][:1] + sorted(["y", "z"])
    best = scores[0]
    assert np.isfinite(best.score) and best.low < best.score < best.high
    assert best.wins == 2 and best.comparisons == 2
    assert bt_scores([]) == []
    with pytest.raises(ValueError, match="alpha"):
        bt_fit(2, [(0, 1, 1.0)], alpha=0)
