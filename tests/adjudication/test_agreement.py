"""adjudication.agreement against reference implementations (scikit-learn, krippendorff, scipy)."""

import math
import random
import warnings
from decimal import Decimal

import krippendorff
import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import cohen_kappa_score

from adjudication import agreement

SCALES = {
    "0-7": [0, 1, 2, 3, 4, 5, 6, 7],
    "0-0.5-1": [0, 0.5, 1],
    "1-4": [1, 2, 3, 4],
    "two": [0, 1],
}


def sk_kappa(a, b, labels):
    # scikit-learn wants class labels, not floats: name each scale value (order kept by `labels`).
    name = {float(v): f"v{i}" for i, v in enumerate(labels)}
    a, b = [name[float(v)] for v in a], [name[float(v)] for v in b]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value = cohen_kappa_score(a, b, weights="quadratic", labels=list(name.values()))
    return None if math.isnan(value) else value


def kr_alpha(units, labels):
    data = np.array([[np.nan if v is None else v for v in unit] for unit in units], dtype=float).T
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            value = krippendorff.alpha(
                reliability_data=data, value_domain=labels, level_of_measurement="ordinal"
            )
    except ValueError:
        return None
    return None if math.isnan(value) else value


def close(ours, theirs):
    if theirs is None:
        return ours is None
    return ours is not None and math.isclose(ours, theirs, rel_tol=1e-9, abs_tol=1e-9)


@pytest.mark.parametrize("scale", sorted(SCALES))
@pytest.mark.parametrize("seed", range(25))
def test_kappa_matches_sklearn_on_random_data(scale, seed):
    rng = random.Random(seed)
    labels = SCALES[scale]
    n = rng.randint(2, 60)
    a = [rng.choice(labels) for _ in range(n)]
    # Correlated second rater: often the same, sometimes a neighbour, sometimes anything.
    b = [
        x if rng.random() < 0.5 else labels[max(0, min(len(labels) - 1, labels.index(x) + 1))]
        for x in a
    ]
    b = [rng.choice(labels) if rng.random() < 0.2 else y for y in b]
    assert close(agreement.quadratic_weighted_kappa(a, b, labels), sk_kappa(a, b, labels))


def test_kappa_uses_the_full_label_set():
    # Labels used are not evenly spaced on the scale: positions 0, 5, 7 vs 0, 1, 2.
    a, b = [0, 5, 7, 5, 7], [5, 5, 7, 0, 5]
    full = agreement.quadratic_weighted_kappa(a, b, SCALES["0-7"])
    used_only = agreement.quadratic_weighted_kappa(a, b, [0, 5, 7])
    assert close(full, sk_kappa(a, b, SCALES["0-7"]))
    assert close(used_only, sk_kappa(a, b, [0, 5, 7]))
    assert not math.isclose(full, used_only)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ([7, 7, 7], [7, 7, 7]),  # both constant, same label: undefined
        ([7, 7, 7], [0, 0, 0]),  # both constant, different: kappa 0
        ([7, 7, 7], [0, 5, 7]),  # one constant rater
        ([0, 1, 0, 1], [0, 1, 1, 1]),  # two categories used
        ([0, 7], [7, 0]),  # total disagreement
    ],
)
def test_kappa_edge_cases(a, b):
    labels = SCALES["0-7"]
    assert close(agreement.quadratic_weighted_kappa(a, b, labels), sk_kappa(a, b, labels))


def test_kappa_two_categories_scale():
    a, b = [0, 1, 1, 0, 1, 1], [0, 1, 0, 0, 1, 1]
    assert close(agreement.quadratic_weighted_kappa(a, b, [0, 1]), sk_kappa(a, b, [0, 1]))


def test_kappa_skips_missing_and_rejects_off_scale_values():
    assert close(
        agreement.quadratic_weighted_kappa([1, None, 3, 2], [1, 2, None, 3], SCALES["1-4"]),
        sk_kappa([1, 2], [1, 3], SCALES["1-4"]),
    )
    assert agreement.quadratic_weighted_kappa([], [], SCALES["0-7"]) is None
    with pytest.raises(ValueError, match="not on the scale"):
        agreement.quadratic_weighted_kappa([8], [7], SCALES["0-7"])


@pytest.mark.parametrize("scale", sorted(SCALES))
@pytest.mark.parametrize("seed", range(25))
def test_alpha_matches_krippendorff_with_missing_values(scale, seed):
    rng = random.Random(1000 + seed)
    labels = SCALES[scale]
    raters = rng.randint(2, 5)
    units = []
    for _ in range(rng.randint(2, 40)):
        truth = rng.choice(labels)
        unit = []
        for _ in range(raters):
            if rng.random() < 0.3:
                unit.append(None)
            elif rng.random() < 0.6:
                unit.append(truth)
            else:
                unit.append(rng.choice(labels))
        units.append(unit)
    assert close(agreement.krippendorff_alpha_ordinal(units, labels), kr_alpha(units, labels))


@pytest.mark.parametrize(
    "units",
    [
        [[3, 3], [3, 3], [3, 3]],  # constant raters: no variation
        [[3, 3, None], [3, 4, 4], [None, 5, 5]],
        [[0, 1], [1, 1], [0, 0], [1, 0]],  # two categories
        [[0, None], [None, 7], [2, 2], [6, 5]],  # singletons drop out
        [[7, 0], [0, 7]],
    ],
)
def test_alpha_edge_cases(units):
    labels = SCALES["0-7"]
    assert close(agreement.krippendorff_alpha_ordinal(units, labels), kr_alpha(units, labels))


def test_alpha_nothing_pairable():
    assert agreement.krippendorff_alpha_ordinal([[1, None], [None, 2]], SCALES["0-7"]) is None


def test_simple_figures_match_scipy_and_hand_values():
    a = [7, 5, 0, 3, None, 6]
    b = [7, 6, 2, 3, 4, None]
    assert agreement.exact_agreement(a, b) == 0.5
    assert agreement.within_tolerance(a, b, 1) == 0.75
    assert agreement.within_tolerance([0, 0.5], [0.5, 0.5], Decimal("0")) == 0.5
    assert agreement.mean_absolute_difference(a, b) == pytest.approx(
        np.mean(np.abs(np.array([7, 5, 0, 3]) - np.array([7, 6, 2, 3])))
    )
    assert agreement.bias([5, 6, 7], [4, 6, 4]) == pytest.approx(4 / 3)
    assert agreement.bias([], []) is None
    assert agreement.exact_agreement([None], [1]) is None
    with pytest.raises(ValueError, match="paired"):
        agreement.exact_agreement([1, 2], [1])


def test_confusion_matrix_rows_are_first_rater():
    matrix = agreement.confusion_matrix([0, 0.5, 1, 1], [0.5, 0.5, 1, 0], SCALES["0-0.5-1"])
    assert matrix == [[0, 1, 0], [0, 1, 0], [1, 0, 1]]


def test_item_pairs_takes_every_pair_of_an_item():
    assert agreement.item_pairs([[1, 2, 3], [4, None], [5]]) == [(1, 2), (1, 3), (2, 3)]


def test_bootstrap_is_seeded_and_close_to_scipy():
    rng = random.Random(7)
    data = [rng.gauss(3, 1.5) for _ in range(200)]

    def mean(sample):
        return sum(sample) / len(sample)

    ours = agreement.bootstrap_ci(data, mean, n_resamples=2000, seed=3)
    assert ours == agreement.bootstrap_ci(data, mean, n_resamples=2000, seed=3)
    assert ours != agreement.bootstrap_ci(data, mean, n_resamples=2000, seed=4)
    theirs = stats.bootstrap(
        (np.array(data),),
        np.mean,
        n_resamples=2000,
        method="percentile",
        random_state=np.random.default_rng(3),
    ).confidence_interval
    assert ours[0] < mean(data) < ours[1]
    assert ours[0] == pytest.approx(theirs.low, abs=0.05)
    assert ours[1] == pytest.approx(theirs.high, abs=0.05)


def test_bootstrap_of_kappa_over_pairs():
    rng = random.Random(11)
    labels = SCALES["0-7"]
    pairs = []
    for _ in range(80):
        x = rng.choice(labels)
        pairs.append((x, max(0, min(7, x + rng.choice([-1, 0, 0, 1])))))

    def kappa(sample):
        return agreement.quadratic_weighted_kappa(
            [p[0] for p in sample], [p[1] for p in sample], labels
        )

    low, high = agreement.bootstrap_ci(pairs, kappa, n_resamples=300, seed=1)
    point = kappa(pairs)
    assert low <= point <= high <= 1


def test_bootstrap_undefined_cases():
    assert agreement.bootstrap_ci([1], lambda s: 1.0) is None
    assert agreement.bootstrap_ci([1, 2, 3], lambda s: None) is None


@pytest.mark.parametrize(
    ("values", "policy", "scale", "expected"),
    [
        ([5, 6], "mean_floor", "0-7", "5"),
        ([6, 6], "mean_floor", "0-7", "6"),
        ([0, 1], "mean_floor", "0-7", "0"),
        ([5, 6], "lower", "0-7", "5"),
        ([5, 6], "mean", "0-7", "5.5"),
        ([4, 5, 5], "mean", "0-7", "4.67"),
        ([0.5, 1], "mean_floor", "0-0.5-1", "0.5"),
        ([2, 3], "mean_floor", "1-4", "2"),
        ([3], "lower", "1-4", "3"),
    ],
)
def test_policies(values, policy, scale, expected):
    value, how = agreement.apply_policy(values, policy, SCALES[scale])
    assert value == Decimal(expected)
    assert how.startswith(policy + ":")


def test_policy_text_and_errors():
    _, how = agreement.apply_policy([5, 6], "mean_floor", SCALES["0-7"])
    assert how == "mean_floor: (5 + 6) / 2 rounded down to the scale = 5"
    with pytest.raises(ValueError, match="unknown label policy 'median'"):
        agreement.apply_policy([1], "median", SCALES["0-7"])
    with pytest.raises(ValueError, match="at least one"):
        agreement.apply_policy([], "lower", SCALES["0-7"])
    assert agreement.disagreement([Decimal("2"), 5, 3]) == Decimal("3")


@pytest.mark.parametrize("seed", range(5))
def test_fast_pair_bootstrap_matches_the_generic_one(seed):
    rng = random.Random(50 + seed)
    labels = SCALES["0-7"]
    groups = []
    for _ in range(rng.randint(5, 40)):
        group = []
        for _ in range(rng.choice([1, 1, 3])):
            x = rng.choice(labels)
            group.append((x, max(0, min(7, x + rng.choice([-2, -1, 0, 0, 1])))))
        groups.append(group)

    def split(sample):
        pairs = [p for g in sample for p in g]
        return [p[0] for p in pairs], [p[1] for p in pairs]

    generic = agreement.bootstrap_cis(
        groups,
        {
            "exact": lambda s: agreement.exact_agreement(*split(s)),
            "within": lambda s: agreement.within_tolerance(*split(s), 1),
            "mad": lambda s: agreement.mean_absolute_difference(*split(s)),
            "kappa": lambda s: agreement.quadratic_weighted_kappa(*split(s), labels),
        },
        n_resamples=200,
        seed=seed,
    )
    fast = agreement.bootstrap_pair_figures(groups, labels, 1, n_resamples=200, seed=seed)
    for name in ("exact", "within", "mad", "kappa"):
        if generic[name] is None:
            assert fast[name] is None
        else:
            assert fast[name] == pytest.approx(generic[name], abs=1e-9)


@pytest.mark.parametrize("seed", range(5))
def test_fast_alpha_bootstrap_matches_the_generic_one(seed):
    rng = random.Random(90 + seed)
    labels = SCALES["1-4"]
    units = [[rng.choice(labels + [None]) for _ in range(3)] for _ in range(rng.randint(5, 30))]
    generic = agreement.bootstrap_ci(
        units,
        lambda s: agreement.krippendorff_alpha_ordinal(s, labels),
        n_resamples=150,
        seed=seed,
    )
    fast = agreement.bootstrap_alpha(units, labels, n_resamples=150, seed=seed)
    if generic is None:
        assert fast is None
    else:
        assert fast == pytest.approx(generic, abs=1e-9)
