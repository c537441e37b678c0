"""Validation: each rule on a table of small schemes, with the words a person reads."""

from decimal import Decimal

import pytest

from rubrics.structure import Level, Message, Scheme, has_errors, validate


def item(id_, points, **extra):
    return {"id": id_, "title": f"step {id_}", "points": str(points), **extra}


def group(id_, points, rule, children, cap=None):
    data = item(id_, points, rule=rule, children=children)
    if cap is not None:
        data["cap"] = str(cap)
    return data


def scheme(*chains, shared=None, shared_cap=None, deductions=()):
    data = {
        "chains": [{"id": "ABC"[i], "items": items} for i, items in enumerate(chains)],
        "deductions": [
            {"id": f"d{i}", "text": text, "kind": kind, "value": str(value)}
            for i, (kind, value, text) in enumerate(deductions, start=1)
        ],
    }
    if shared is not None:
        data["shared"] = {
            "id": "shared",
            "items": shared,
            "rule": "max" if shared_cap is not None else "additive",
            "cap": None if shared_cap is None else str(shared_cap),
        }
    return Scheme.from_dict(data)


SEVEN = [item("A1", 3), item("A2", 4)]

CASES = [
    # (name, scheme, [(level, where, words in the text)])
    ("valid single chain", scheme(SEVEN), []),
    (
        "valid chains with shared [max 2]",
        scheme(
            [item("A1", 5)],
            [group("B1", 5, "larger", [item("B1.1", 5), item("B1.2", 2)])],
            shared=[item("s1", 1), item("s2", 2)],
            shared_cap=2,
        ),
        [],
    ),
    ("empty", Scheme(), [("error", "", "no checkpoints")]),
    (
        "chain over 7 with the shared prerequisites",
        scheme([item("A1", 6)], [item("B1", 5)], shared=[item("s1", 2)]),
        [("error", "A", "Chain A with the shared prerequisites can total 8 points")],
    ),
    (
        "no chain reaches 7",
        scheme([item("A1", 3), item("A2", 3)], [item("B1", 5)]),
        [
            (
                "error",
                "",
                "No chain reaches exactly 7/7, so no proof could get full marks "
                "(the most each chain can give: A: 6, B: 5).",
            )
        ],
    ),
    (
        "half-point main step",
        scheme([item("A1", "3.5"), item("A2", "3.5")]),
        [
            ("error", "A1", "worth 3.5 points: a checkpoint is worth whole points"),
            ("error", "A2", "worth 3.5 points"),
        ],
    ),
    (
        "caps outside 0-7, a cap at 7",
        scheme(SEVEN, deductions=[("cap", 8, "x"), ("cap", -1, "y"), ("cap", 7, "z")]),
        [
            ("error", "d1", "caps the score at 8/7: a cap must lie between 0 and 7"),
            ("error", "d2", "caps the score at -1/7"),
            ("warning", "d3", "caps the score at 7/7, which changes nothing"),
        ],
    ),
    (
        "deductions not positive or larger than the scale",
        scheme(SEVEN, deductions=[("minus", 0, "x"), ("minus", -1, "y"), ("minus", 8, "z")]),
        [
            ("error", "d1", "takes off 0 points: a deduction must be a positive number"),
            ("error", "d2", "takes off -1 points"),
            ("error", "d3", "takes off 8 points, more than the whole scale of 7"),
        ],
    ),
    (
        "deduction that does not say when",
        scheme(SEVEN, deductions=[("minus", 1, " ")]),
        [("warning", "d1", "does not say when it applies")],
    ),
    (
        "duplicate ids",
        scheme([item("A1", 3), item("A1", 4)]),
        [("error", "A1", "The id A1 is used 2 times")],
    ),
    (
        "missing id",
        scheme([item("", 3), item("A2", 4)]),
        [("error", "", "1 item(s) have no id")],
    ),
    (
        "[max k] that never matters, and k not positive",
        scheme(
            [
                group("A1", 2, "max", [item("A1.1", 1), item("A1.2", 1)], cap=3),
                group("A2", 5, "max", [item("A2.1", 5)], cap=0),
                group("A3", 0, "max", [item("A3.1", 1)]),
            ]
        ),
        [
            ("error", "A2", "has [max 0]: k must be positive"),
            ("error", "A3", "says [max k] but gives no k"),
            ("error", "", "No chain reaches exactly 7/7"),  # 2 + 0 + 0
            ("warning", "A1", "has [max 3] but its items only add up to 2"),
            ("warning", "A2", "stated as 5 points but its nested items give at most 0"),
            ("warning", "A3", "stated as 0 points but its nested items give at most 1"),
        ],
    ),
    (
        "larger-only with one item, a leaf with a rule, a zero-point leaf",
        scheme(
            [
                group("A1", 3, "larger", [item("A1.1", 3)]),
                item("A2", 4, rule="larger"),
                item("A3", 0),
            ]
        ),
        [
            ("warning", "A1", "says 'award the larger only' but has a single nested item"),
            ("warning", "A2", "says 'award the larger only' but has no nested items"),
            ("warning", "A3", "worth 0 points; list it under zero-credit items instead"),
        ],
    ),
    (
        "approachability off the 1-5 scale",
        scheme([item("A1", 7, approachability=6)]),
        [("warning", "A1", "approachability 6; the scale is 1-5")],
    ),
    (
        "shared [max k] caps the shared group's share",
        scheme([item("A1", 5)], shared=[item("s1", 2), item("s2", 2)], shared_cap=2),
        [],
    ),
]


@pytest.mark.parametrize(("scheme_", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_validation_table(scheme_, expected):
    messages = validate(scheme_)
    assert [(m.level.value, m.where) for m in messages] == [(lv, w) for lv, w, _ in expected]
    for message, (_, _, words) in zip(messages, expected, strict=True):
        assert words in message.text
    assert has_errors(messages) == any(level == "error" for level, _, _ in expected)


def test_messages_serialise_and_read_in_words():
    message = Message(Level.ERROR, "Chain A can total 8 points, more than 7.", "A", 4)
    assert Message.from_dict(message.to_dict()) == message
    assert message.to_dict() == {
        "level": "error",
        "text": "Chain A can total 8 points, more than 7.",
        "where": "A",
        "line": 4,
    }
    assert str(message) == "error: line 4, A: Chain A can total 8 points, more than 7."


def test_totals_include_shared_once_and_max_caps():
    s = scheme(
        [group("A1", 4, "max", [item("A1.1", 3), item("A1.2", 3)], cap=4), item("A2", 1)],
        shared=[item("s1", 1), item("s2", 2), item("s3", 2)],
        shared_cap=2,
    )
    # A: min(3 + 3, 4) + 1 = 5; shared: min(1 + 2 + 2, 2) = 2; total 7
    assert s.chain_totals() == {"A": Decimal(7)}
    assert validate(s) == []
