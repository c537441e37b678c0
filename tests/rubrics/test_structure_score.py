"""The score function against tables worked out by hand.

Small schemes are checked on EVERY combination of award levels and applied deductions
(itertools.product), each expected value written out below with its arithmetic; bigger,
parsed schemes on hand-picked cases.
"""

import itertools
from decimal import Decimal

import pytest

from rubrics.structure import (
    AwardError,
    Chain,
    Checkpoint,
    Deduction,
    DeductionKind,
    Partial,
    Rule,
    Scheme,
    ZeroCreditItem,
    check_awards,
    compute_score,
    parse_proofbench,
    scheme_to_markdown,
    score_breakdown,
)
from tests.rubrics.test_structure_examples import PB_CHAINS, PB_VARIANT

D = Decimal


def leaf(id_, points, partial=Partial.NONE):
    return Checkpoint(id_, f"item {id_}", D(points), partial=partial)


def combos(scheme, deduction_sets):
    """Every (awards tuple, deduction set) over the leaves' award levels, in scheme order."""
    levels = [cp.award_levels() for cp in scheme.leaves()]
    return [
        (values, deductions)
        for values in itertools.product(*levels)
        for deductions in deduction_sets
    ]


def check_table(scheme, table, deduction_sets):
    ids = [cp.id for cp in scheme.leaves()]
    expected_keys = {tuple(D(v) for v in key) for key in table}
    actual_keys = {values for values, _ in combos(scheme, [()])}
    assert expected_keys == actual_keys, "the table must list every combination of awards"
    for key, expected_row in table.items():
        assert len(expected_row) == len(deduction_sets)
        awards = dict(zip(ids, (D(v) for v in key), strict=True))
        for deductions, expected in zip(deduction_sets, expected_row, strict=True):
            got = compute_score(scheme, awards, deductions)
            assert got == D(expected), f"awards {awards}, deductions {deductions}"


# --- T1: "award the larger only" + a cap and a flat deduction -----------------------------
# c1 (4 pts, all or nothing); c2 = larger of {c2.1 (3), c2.2 (1)}; d1 cap at 4/7, d2 -2.
T1 = Scheme(
    chains=[
        Chain(
            "A",
            items=[
                leaf("c1", 4),
                Checkpoint(
                    "c2",
                    "lemma",
                    D(3),
                    rule=Rule.LARGER,
                    children=[leaf("c2.1", 3), leaf("c2.2", 1)],
                ),
            ],
        )
    ],
    deductions=[
        Deduction("d1", "cap", DeductionKind.CAP, D(4)),
        Deduction("d2", "minus", DeductionKind.MINUS, D(2)),
    ],
)
T1_DEDUCTIONS = [(), ("d1",), ("d2",), ("d1", "d2")]
# (c1, c2.1, c2.2): (none, cap 4, -2, both: the one lowering most)
T1_TABLE = {
    (0, 0, 0): (0, 0, 0, 0),  # s = 0; cap: 0; -2: -2 -> clamp 0; both: min(0, -2) -> 0
    (0, 0, 1): (1, 1, 0, 0),  # s = max(0, 1) = 1; cap 1; -2: -1 -> 0; both 0
    (0, 3, 0): (3, 3, 1, 1),  # s = 3; cap 3; -2: 1; both min(3, 1) = 1
    (0, 3, 1): (3, 3, 1, 1),  # s = max(3, 1) = 3 (not 4): larger only
    (4, 0, 0): (4, 4, 2, 2),  # s = 4; cap 4 changes nothing; -2: 2; both 2
    (4, 0, 1): (5, 4, 3, 3),  # s = 5; cap 4; -2: 3; both min(4, 3) = 3: the -2 wins
    (4, 3, 0): (7, 4, 5, 4),  # s = 7; cap 4; -2: 5; both min(4, 5) = 4: the cap wins
    (4, 3, 1): (7, 4, 5, 4),  # s = 4 + max(3, 1) = 7; as above
}


def test_t1_every_combination():
    check_table(T1, T1_TABLE, T1_DEDUCTIONS)


def test_t1_breakdown_names_the_deduction_that_counted():
    low = score_breakdown(T1, {"c1": 4, "c2.2": 1}, ["d1", "d2"])
    assert (low.subtotal, low.deduction, low.score) == (D(5), "d2", D(3))
    high = score_breakdown(T1, {"c1": 4, "c2.1": 3}, ["d1", "d2"])
    assert (high.subtotal, high.deduction, high.score) == (D(7), "d1", D(4))
    assert high.values["c2"] == D(3)


# --- T2: shared prerequisites [max 1], two chains, a [max 4] group ----------------------
# shared [max 1]: s1 (1), s2 (1). Chain A: A1 (6). Chain B: B1 = [max 4] of {B1.1 (3),
# B1.2 (2)}, then B2 (2). Score = min(s1 + s2, 1) + max(A, B), shared counted once.
T2 = Scheme(
    shared=Chain("shared", rule=Rule.MAX, cap=D(1), items=[leaf("s1", 1), leaf("s2", 1)]),
    chains=[
        Chain("A", items=[leaf("A1", 6)]),
        Chain(
            "B",
            items=[
                Checkpoint(
                    "B1",
                    "group",
                    D(4),
                    rule=Rule.MAX,
                    cap=D(4),
                    children=[leaf("B1.1", 3), leaf("B1.2", 2)],
                ),
                leaf("B2", 2),
            ],
        ),
    ],
)
# Chain B alone, by (B1.1, B1.2, B2): B1 = min(B1.1 + B1.2, 4), B = B1 + B2
#   (0,0,0) 0  (0,0,2) 2  (0,2,0) 2  (0,2,2) 4  (3,0,0) 3  (3,0,2) 5  (3,2,0) 4  (3,2,2) 6
# (s1, s2, A1, B1.1, B1.2, B2): score
T2_TABLE = {
    # shared = 0 (nothing): score = max(A1, B)
    (0, 0, 0, 0, 0, 0): (0,),
    (0, 0, 0, 0, 0, 2): (2,),
    (0, 0, 0, 0, 2, 0): (2,),
    (0, 0, 0, 0, 2, 2): (4,),
    (0, 0, 0, 3, 0, 0): (3,),
    (0, 0, 0, 3, 0, 2): (5,),
    (0, 0, 0, 3, 2, 0): (4,),  # 3 + 2 = 5 capped at [max 4]
    (0, 0, 0, 3, 2, 2): (6,),  # 4 + 2
    (0, 0, 6, 0, 0, 0): (6,),  # A = 6 beats B = 0
    (0, 0, 6, 0, 0, 2): (6,),
    (0, 0, 6, 0, 2, 0): (6,),
    (0, 0, 6, 0, 2, 2): (6,),
    (0, 0, 6, 3, 0, 0): (6,),
    (0, 0, 6, 3, 0, 2): (6,),  # max(6, 5): chains never add
    (0, 0, 6, 3, 2, 0): (6,),
    (0, 0, 6, 3, 2, 2): (6,),  # max(6, 6)
    # shared = min(0 + 1, 1) = 1: score = 1 + max(A1, B)
    (0, 1, 0, 0, 0, 0): (1,),
    (0, 1, 0, 0, 0, 2): (3,),
    (0, 1, 0, 0, 2, 0): (3,),
    (0, 1, 0, 0, 2, 2): (5,),
    (0, 1, 0, 3, 0, 0): (4,),
    (0, 1, 0, 3, 0, 2): (6,),
    (0, 1, 0, 3, 2, 0): (5,),
    (0, 1, 0, 3, 2, 2): (7,),  # 1 + 6
    (0, 1, 6, 0, 0, 0): (7,),  # 1 + 6
    (0, 1, 6, 0, 0, 2): (7,),
    (0, 1, 6, 0, 2, 0): (7,),
    (0, 1, 6, 0, 2, 2): (7,),
    (0, 1, 6, 3, 0, 0): (7,),
    (0, 1, 6, 3, 0, 2): (7,),
    (0, 1, 6, 3, 2, 0): (7,),
    (0, 1, 6, 3, 2, 2): (7,),  # 1 + max(6, 6), shared once: not 1 + 6 + 1
    # shared = min(1 + 0, 1) = 1: same as the block above
    (1, 0, 0, 0, 0, 0): (1,),
    (1, 0, 0, 0, 0, 2): (3,),
    (1, 0, 0, 0, 2, 0): (3,),
    (1, 0, 0, 0, 2, 2): (5,),
    (1, 0, 0, 3, 0, 0): (4,),
    (1, 0, 0, 3, 0, 2): (6,),
    (1, 0, 0, 3, 2, 0): (5,),
    (1, 0, 0, 3, 2, 2): (7,),
    (1, 0, 6, 0, 0, 0): (7,),
    (1, 0, 6, 0, 0, 2): (7,),
    (1, 0, 6, 0, 2, 0): (7,),
    (1, 0, 6, 0, 2, 2): (7,),
    (1, 0, 6, 3, 0, 0): (7,),
    (1, 0, 6, 3, 0, 2): (7,),
    (1, 0, 6, 3, 2, 0): (7,),
    (1, 0, 6, 3, 2, 2): (7,),
    # shared = min(1 + 1, 1) = 1 ([max 1]): same again, never 2
    (1, 1, 0, 0, 0, 0): (1,),
    (1, 1, 0, 0, 0, 2): (3,),
    (1, 1, 0, 0, 2, 0): (3,),
    (1, 1, 0, 0, 2, 2): (5,),
    (1, 1, 0, 3, 0, 0): (4,),
    (1, 1, 0, 3, 0, 2): (6,),
    (1, 1, 0, 3, 2, 0): (5,),
    (1, 1, 0, 3, 2, 2): (7,),
    (1, 1, 6, 0, 0, 0): (7,),
    (1, 1, 6, 0, 0, 2): (7,),
    (1, 1, 6, 0, 2, 0): (7,),
    (1, 1, 6, 0, 2, 2): (7,),
    (1, 1, 6, 3, 0, 0): (7,),
    (1, 1, 6, 3, 0, 2): (7,),
    (1, 1, 6, 3, 2, 0): (7,),
    (1, 1, 6, 3, 2, 2): (7,),
}


def test_t2_every_combination():
    check_table(T2, T2_TABLE, [()])


def test_t2_breakdown_picks_the_best_chain_and_counts_shared_once():
    result = score_breakdown(T2, {"s1": 1, "s2": 1, "B1.1": 3, "B1.2": 2, "B2": 2})
    assert result.shared == D(1)
    assert result.chains == {"A": D(1), "B": D(7)}
    assert result.best_chain == "B"
    assert result.values["B1"] == D(4)


# --- T3: RefGrader half points within a step, final score rounded down ---------------------
# c1 (2 pts, half-point partial credit), c2 (5 pts, all or nothing); d1 -1; round down.
T3 = Scheme(
    chains=[Chain("A", items=[leaf("c1", 2, Partial.HALF), leaf("c2", 5)])],
    deductions=[Deduction("d1", "minus", DeductionKind.MINUS, D(1))],
    round_down=True,
)
T3_DEDUCTIONS = [(), ("d1",)]
# (c1, c2): (no deduction, -1), both rounded down after the deduction
T3_TABLE = {
    ("0", 0): (0, 0),  # 0; -1 -> clamp 0
    ("0.5", 0): (0, 0),  # 0.5 -> floor 0; -0.5 -> clamp 0
    ("1", 0): (1, 0),  # 1; 0
    ("1.5", 0): (1, 0),  # floor 1.5 = 1; 0.5 -> 0
    ("2", 0): (2, 1),  # 2; 1
    ("0", 5): (5, 4),  # 5; 4
    ("0.5", 5): (5, 4),  # floor 5.5 = 5; floor 4.5 = 4
    ("1", 5): (6, 5),  # 6; 5
    ("1.5", 5): (6, 5),  # floor 6.5 = 6; floor 5.5 = 5
    ("2", 5): (7, 6),  # 7; 6
}


def test_t3_every_combination():
    check_table(T3, T3_TABLE, T3_DEDUCTIONS)


def test_t3_without_rounding_keeps_half_points():
    plain = Scheme(chains=T3.chains, deductions=T3.deductions, round_down=False)
    assert compute_score(plain, {"c1": "1.5", "c2": 5}) == D("6.5")
    assert compute_score(plain, {"c1": "1.5", "c2": 5}, ["d1"]) == D("5.5")


# --- T4: integer partial credit; a -3 penalty against a cap at 2/7 -------------------------
# c1 (3 pts, any whole number), c2 (4 pts, all or nothing); d1 -3, d2 cap at 2/7.
T4 = Scheme(
    chains=[Chain("A", items=[leaf("c1", 3, Partial.INTEGER), leaf("c2", 4)])],
    deductions=[
        Deduction("d1", "minus", DeductionKind.MINUS, D(3)),
        Deduction("d2", "cap", DeductionKind.CAP, D(2)),
    ],
)
T4_DEDUCTIONS = [(), ("d1",), ("d2",), ("d1", "d2")]
# (c1, c2): (none, -3, cap 2, both = min(s - 3, min(s, 2)))
T4_TABLE = {
    (0, 0): (0, 0, 0, 0),  # s 0: -3 -> 0; cap 0; both 0
    (1, 0): (1, 0, 1, 0),  # s 1: -2 -> 0; cap 1; both min(-2, 1) -> 0
    (2, 0): (2, 0, 2, 0),  # s 2: -1 -> 0; cap 2; both 0
    (3, 0): (3, 0, 2, 0),  # s 3: 0; cap 2; both min(0, 2) = 0
    (0, 4): (4, 1, 2, 1),  # s 4: 1; cap 2; both min(1, 2) = 1: the -3 wins
    (1, 4): (5, 2, 2, 2),  # s 5: 2; cap 2; both 2 (a tie)
    (2, 4): (6, 3, 2, 2),  # s 6: 3; cap 2; both min(3, 2) = 2: the cap wins
    (3, 4): (7, 4, 2, 2),  # s 7: 4; cap 2; both 2
}


def test_t4_every_combination():
    check_table(T4, T4_TABLE, T4_DEDUCTIONS)


# --- T5: "award the larger only" nested inside a [max 3] group ---------------------------
# c1 = [max 3] of { c1.1 = larger of {c1.1.1 (2), c1.1.2 (1)}, c1.2 (2) }; c2 (4).
T5 = Scheme(
    chains=[
        Chain(
            "A",
            items=[
                Checkpoint(
                    "c1",
                    "group",
                    D(3),
                    rule=Rule.MAX,
                    cap=D(3),
                    children=[
                        Checkpoint(
                            "c1.1",
                            "lemma",
                            D(2),
                            rule=Rule.LARGER,
                            children=[leaf("c1.1.1", 2), leaf("c1.1.2", 1)],
                        ),
                        leaf("c1.2", 2),
                    ],
                ),
                leaf("c2", 4),
            ],
        )
    ]
)
# (c1.1.1, c1.1.2, c1.2, c2): min(max(c1.1.1, c1.1.2) + c1.2, 3) + c2
T5_TABLE = {
    (0, 0, 0, 0): (0,),
    (0, 0, 0, 4): (4,),
    (0, 0, 2, 0): (2,),
    (0, 0, 2, 4): (6,),
    (0, 1, 0, 0): (1,),
    (0, 1, 0, 4): (5,),
    (0, 1, 2, 0): (3,),  # 1 + 2 = 3, at the cap
    (0, 1, 2, 4): (7,),
    (2, 0, 0, 0): (2,),
    (2, 0, 0, 4): (6,),
    (2, 0, 2, 0): (3,),  # 2 + 2 = 4 -> [max 3]
    (2, 0, 2, 4): (7,),
    (2, 1, 0, 0): (2,),  # max(2, 1) = 2, not 3
    (2, 1, 0, 4): (6,),
    (2, 1, 2, 0): (3,),  # min(2 + 2, 3)
    (2, 1, 2, 4): (7,),
}


def test_t5_every_combination():
    check_table(T5, T5_TABLE, [()])
    # the same scheme written out and read back scores the same
    again, messages = parse_proofbench(scheme_to_markdown(T5))
    assert again == T5 and messages == []


# --- Parsed schemes, hand-picked cases -----------------------------------------------------


@pytest.fixture(scope="module")
def chains_scheme():
    scheme, _ = parse_proofbench(PB_CHAINS)
    return scheme


# PB_CHAINS: shared [max 2] {s1 1, s2 1}; A: A1 2, A2 1, A3 = larger of {A3.1 2, A3.2 1};
# B: B1 3, B2 2; d1 cap 5, d2 cap 3, d3 -1, d4 -2.
CHAINS_CASES = [
    ({}, (), 0),
    ({"s1": 1, "s2": 1}, (), 2),  # shared alone
    ({"s1": 1, "s2": 1, "A1": 2, "A2": 1, "A3.1": 2}, (), 7),  # 2 + (2 + 1 + 2)
    ({"s1": 1, "A1": 2, "A2": 1, "A3.1": 2, "A3.2": 1}, (), 6),  # 1 + (2 + 1 + max(2, 1))
    ({"s1": 1, "s2": 1, "A3.2": 1, "B1": 3, "B2": 2}, (), 7),  # 2 + max(A 1, B 5)
    ({"s1": 1, "s2": 1, "A1": 2, "A2": 1, "B1": 3}, (), 5),  # 2 + max(3, 3)
    ({"s1": 1, "s2": 1, "B1": 3, "B2": 2}, ("d1",), 5),  # 7 capped at 5
    ({"s1": 1, "s2": 1, "B1": 3, "B2": 2}, ("d1", "d3"), 5),  # cap 5 beats -1 (6)
    ({"s1": 1, "s2": 1, "B1": 3, "B2": 2}, ("d1", "d4"), 5),  # cap 5 ties -2 (5)
    ({"s1": 1, "s2": 1, "B1": 3, "B2": 2}, ("d2", "d3"), 3),  # cap 3 beats -1
    ({"s1": 1, "B1": 3}, ("d2", "d4"), 2),  # s = 4: cap 3 -> 3, -2 -> 2: the -2 wins
    ({"A1": 2}, ("d3", "d4"), 0),  # 2 - 2 = 0
    ({"A2": 1}, ("d4",), 0),  # 1 - 2 -> clamp 0
]


@pytest.mark.parametrize(("awards", "deductions", "expected"), CHAINS_CASES)
def test_parsed_chains_scheme_cases(chains_scheme, awards, deductions, expected):
    assert compute_score(chains_scheme, awards, deductions) == D(expected)


# PB_VARIANT: A: A1 1, A2 = [max 2] {A2.1 1, A2.2 1, A2.3 1}, A3 = larger of {A3.1 4, A3.2 2};
# B: B1 7 all or nothing; d1 -1, d2 -2, d3 cap 4.
VARIANT_CASES = [
    ({"A2.1": 1, "A2.2": 1, "A2.3": 1}, (), 2),  # [max 2] of 3
    ({"A1": 1, "A2.1": 1, "A2.2": 1, "A2.3": 1, "A3.1": 4, "A3.2": 2}, (), 7),  # 1 + 2 + 4
    ({"A1": 1, "A3.2": 2}, ("d1",), 2),  # 3 - 1
    ({"B1": 7}, ("d3",), 4),
    ({"B1": 7, "A1": 1}, ("d1", "d2"), 5),  # max(A 1, B 7) = 7; -2 -> 5
]


@pytest.mark.parametrize(("awards", "deductions", "expected"), VARIANT_CASES)
def test_parsed_variant_scheme_cases(awards, deductions, expected):
    scheme, _ = parse_proofbench(PB_VARIANT)
    assert compute_score(scheme, awards, deductions) == D(expected)


# --- Awards that do not fit ---------------------------------------------------------------


def test_bad_awards_are_refused_in_words():
    scheme = Scheme(
        chains=T1.chains,
        deductions=T1.deductions,
        zero_credit=[ZeroCreditItem("z1", "restating the problem")],
    )
    problems = check_awards(scheme, {"c9": 1, "c2": 3, "c1": 2, "c2.1": "x", "z1": 1}, ["d7"])
    assert problems == [
        "c9 is not a checkpoint of this scheme",
        "c2 (lemma) is a group: award its items, not the group itself",
        "c1 (item c1) cannot be awarded 2: allowed values are 0, 4",
        "c2.1: 'x' is not a number of points",
        "z1 is a zero-credit item: it can only be worth 0",
        "d7 is not a deduction of this scheme",
    ]
    with pytest.raises(AwardError) as caught:
        compute_score(scheme, {"c1": 5})
    assert caught.value.problems == ["c1 (item c1) cannot be awarded 5: allowed values are 0, 4"]
    assert compute_score(scheme, {"z1": 0, "c1": "4"}) == D(4)


def test_awards_accept_ints_strings_and_floats():
    assert compute_score(T3, {"c1": 1.5, "c2": "5"}) == D(6)
    assert compute_score(T3, {"c1": D("0.5"), "c2": 5}) == D(5)
