"""The scheme data model: ids, award levels, dict round trips."""

from decimal import Decimal

from rubrics.structure import (
    Chain,
    Checkpoint,
    Deduction,
    DeductionKind,
    Partial,
    Rule,
    Scheme,
    ZeroCreditItem,
)


def _scheme() -> Scheme:
    return Scheme(
        chains=[
            Chain(
                id="",
                items=[
                    Checkpoint("", "Set-up", Decimal(1)),
                    Checkpoint(
                        "",
                        "Lemma",
                        Decimal(2),
                        rule=Rule.LARGER,
                        children=[
                            Checkpoint("", "Full proof", Decimal(2), partial=Partial.NONE),
                            Checkpoint("", "Proof with a gap", Decimal(1)),
                        ],
                    ),
                ],
            ),
            Chain(id="", items=[Checkpoint("", "Other way", Decimal(3), partial=Partial.HALF)]),
        ],
        shared=Chain(id="", rule=Rule.MAX, cap=Decimal(4), items=[Checkpoint("", "R", Decimal(4))]),
        deductions=[Deduction("", "lemma flawed", DeductionKind.CAP, Decimal(5))],
    ).assign_ids()


def test_assign_ids_gives_chain_letters_shared_and_nested_ids():
    scheme = _scheme()
    assert [cp.id for cp in scheme.all_checkpoints()] == ["s1", "A1", "A2", "A2.1", "A2.2", "B1"]
    assert [cp.id for cp in scheme.leaves()] == ["s1", "A1", "A2.1", "A2.2", "B1"]
    assert scheme.deductions[0].id == "d1"
    single = Scheme(chains=[Chain(id="", items=[Checkpoint("", "x", Decimal(7))])]).assign_ids()
    assert single.all_checkpoints()[0].id == "c1"


def test_award_levels_follow_partial_rule():
    scheme = _scheme()
    assert scheme.checkpoint("A2.1").award_levels() == [Decimal(0), Decimal(2)]
    assert scheme.checkpoint("s1").award_levels() == [Decimal(n) for n in range(5)]
    assert scheme.checkpoint("B1").award_levels() == [Decimal(n) / 2 for n in range(7)]


def test_dict_round_trip_keeps_everything():
    scheme = _scheme()
    data = scheme.to_dict()
    assert data["chains"][0]["items"][1]["children"][0]["points"] == "2"
    assert Scheme.from_dict(data) == scheme
    assert Scheme.from_dict(data).to_dict() == data


def test_legacy_checkpoint_list_reads_as_one_chain():
    scheme = Scheme.from_dict({"checkpoints": [{"id": "c1", "title": "x", "points": 7}]})
    assert [cp.id for cp in scheme.all_checkpoints()] == ["c1"]
    assert scheme.chain_totals() == {"A": Decimal(7)}


def test_from_chains_joins_rubrics_as_parallel_chains():
    first = Scheme(
        chains=[Chain("A", "own title", [Checkpoint("c1", "x", Decimal(7))])],
        zero_credit=[ZeroCreditItem("z1", "restating")],
        deductions=[Deduction("d1", "gap", DeductionKind.MINUS, Decimal(1))],
        notes="same",
    )
    second = Scheme(
        chains=[
            Chain("A", "", [Checkpoint("c1", "y", Decimal(3)), Checkpoint("c2", "z", Decimal(4))])
        ],
        zero_credit=[ZeroCreditItem("z1", "restating"), ZeroCreditItem("z2", "small cases")],
        deductions=[Deduction("d1", "gap", DeductionKind.MINUS, Decimal(1))],
        round_down=True,
        notes="same",
    )
    merged = Scheme.from_chains([first, second], titles=["", "Cluster 2"])
    assert [(c.id, c.title) for c in merged.chains] == [("A", "own title"), ("B", "Cluster 2")]
    assert [cp.id for cp in merged.leaves()] == ["A1", "B1", "B2"]
    assert [(z.id, z.text) for z in merged.zero_credit] == [
        ("z1", "restating"),
        ("z2", "small cases"),
    ]
    assert [d.id for d in merged.deductions] == ["d1"]
    assert merged.round_down and merged.notes == "same"
    assert first.chains[0].items[0].id == "c1"  # the inputs are left as they were
    assert Scheme.from_chains([first], titles=[]).chains[0].title == "own title"
