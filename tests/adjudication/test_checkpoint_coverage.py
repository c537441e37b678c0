"""A few cells of benchmarks/bench_checkpoints.py as small deterministic tests (fixed seeds,
few draws): the checkpoint intervals' population values are what the recipe gives, and at 20
and 50 double-scored proofs the page's bootstrap intervals cover them about as often as they
claim; the whole sweep is the benchmark's (RESULTS.md "Checkpoint intervals")."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import bench_checkpoints  # noqa: E402


@pytest.fixture(scope="module")
def clear():
    return bench_checkpoints.population(0.85)


def test_the_population_figures_follow_the_recipe(clear):
    # two experts each right 85% of the time, else one level off: equal with chance
    # 0.85^2 + the chance both err to the same level
    assert 0.72 < clear["agreement"] < 0.77 and 0.7 < clear["alpha"] < 0.85
    assert 0.8 < clear["discrimination"] < 0.87
    ambiguous = bench_checkpoints.population(0.55)
    assert ambiguous["alpha"] < 0.5 < clear["alpha"]


@pytest.mark.parametrize("proofs", [20, 50])
def test_the_intervals_cover_the_population_figures(clear, proofs):
    found = bench_checkpoints.measure(proofs, 0.85, clear, reps=40, seed=proofs)
    for figure in ("agreement", "alpha", "discrimination"):
        assert found[figure]["coverage"] >= 0.85, (figure, found[figure])
        assert found[figure]["missing"] == 0
    if proofs == 20:
        again = bench_checkpoints.measure(proofs, 0.85, clear, reps=40, seed=proofs)
        assert again == found  # seeded: the same draws, the same intervals
