"""Schemes written the way experts write them (by hand, in the ProofBench sections), and what
each reads as: nested partial credits are alternatives unless the text says they add up, "None."
lists nothing, "(0 pts)" is not kept in item text, points show as "1.5" and "1"."""

from decimal import Decimal

import pytest

from problems.templatetags.proofmark import number
from rubrics.structure import Level, check_awards, compute_score, parse_scheme

STEP_WITH_PARTIAL_CREDITS = r"""**Checkpoints**
1. (2 pts) Finds the answer $n = 3$ and shows that it works.
2. (3 pts) Proves that $n \le 3$.
   - (1 pt) Shows that $n$ is odd.
   - (2 pts) Reduces to $n = 5$ but does not finish.
3. (2 pts) Concludes.

**Zero-credit items**
- None.

**Deductions**
- None.
"""

STEP_WITH_PARTS_THAT_ADD_UP = r"""## Checkpoints
- (2 pts) Finds the answer $n = 3$.
- (5 pts) Proves that $n \le 3$ (the parts below add up):
  - (2 pts) Shows that $n$ is odd.
  - (3 pts) Rules out $n = 5$.
"""

STEP_TAGGED_ADDITIVE = r"""## Checkpoints
- (2 pts) Finds the answer. [additive]
- (5 pts) Upper bound. [additive]
  - (2 pts) Parity argument. [additive]
  - (3 pts) Case $n = 5$. [additive]
"""

PARTIAL_CREDITS_BELOW_THE_STEP = r"""## Checkpoints
- (4 pts) Proves the key lemma.
  - (1 pt) States the lemma and checks $n = 1$.
  - (2 pts) Proves it with a gap.
- (3 pts) Deduces the claim.
"""

ZERO_CREDIT_AS_WRITTEN = r"""## Checkpoints
- (7 pts) A complete proof.

## Zero-credit items
- (0 pts) Checking $n \le 4$ by hand.
- Stating the answer without proof — 0 pts
- **0 pts:** Drawing the figure.
- N/A

## Deductions
- None.
"""

INLINE_NONE = r"""Checkpoints:
- (7 pts) A complete proof.
Zero-credit items: None.
Deductions: None.
"""

HALF_POINTS = r"""## Checkpoints
- (2 pts) Bound (partial credit in steps of 0.5).
- (5 pts) The rest.
"""


def _shape(text: str) -> dict:
    result = parse_scheme(text, "proofbench_markdown")
    scheme = result.scheme
    return {
        "errors": [m.text for m in result.messages if m.level is Level.ERROR],
        "items": [
            (cp.id, cp.title, str(cp.points), cp.rule.value if cp.children else "")
            for cp in scheme.all_checkpoints()
        ],
        "zero": [z.text for z in scheme.zero_credit],
        "deductions": len(scheme.deductions),
        "notes": scheme.notes,
    }


TABLE = [
    (
        STEP_WITH_PARTIAL_CREDITS,
        [
            ("c1", "Finds the answer $n = 3$ and shows that it works.", "2", ""),
            ("c2", "Proves that $n \\le 3$.", "3", "larger"),
            ("c2.1", "Full credit for this step", "3", ""),
            ("c2.2", "Shows that $n$ is odd.", "1", ""),
            ("c2.3", "Reduces to $n = 5$ but does not finish.", "2", ""),
            ("c3", "Concludes.", "2", ""),
        ],
        [],
    ),
    (
        STEP_WITH_PARTS_THAT_ADD_UP,
        [
            ("c1", "Finds the answer $n = 3$.", "2", ""),
            ("c2", "Proves that $n \\le 3$ (the parts below add up)", "5", "additive"),
            ("c2.1", "Shows that $n$ is odd.", "2", ""),
            ("c2.2", "Rules out $n = 5$.", "3", ""),
        ],
        [],
    ),
    (
        STEP_TAGGED_ADDITIVE,
        [
            ("c1", "Finds the answer.", "2", ""),
            ("c2", "Upper bound.", "5", "additive"),
            ("c2.1", "Parity argument.", "2", ""),
            ("c2.2", "Case $n = 5$.", "3", ""),
        ],
        [],
    ),
    (
        PARTIAL_CREDITS_BELOW_THE_STEP,
        [
            ("c1", "Proves the key lemma.", "4", "larger"),
            ("c1.1", "Full credit for this step", "4", ""),
            ("c1.2", "States the lemma and checks $n = 1$.", "1", ""),
            ("c1.3", "Proves it with a gap.", "2", ""),
            ("c2", "Deduces the claim.", "3", ""),
        ],
        [],
    ),
    (
        ZERO_CREDIT_AS_WRITTEN,
        [("c1", "A complete proof.", "7", "")],
        [
            "Checking $n \\le 4$ by hand.",
            "Stating the answer without proof",
            "Drawing the figure.",
        ],
    ),
    (INLINE_NONE, [("c1", "A complete proof.", "7", "")], []),
]


@pytest.mark.parametrize(("text", "items", "zero"), TABLE)
def test_expert_written_schemes_read_as_meant(text, items, zero):
    shape = _shape(text)
    assert shape["errors"] == []
    assert shape["items"] == items
    assert shape["zero"] == zero
    assert shape["deductions"] == 0 and shape["notes"] == ""


def test_partial_credits_are_alternatives_and_the_full_step_still_counts():
    scheme = parse_scheme(STEP_WITH_PARTIAL_CREDITS, "proofbench_markdown").scheme
    assert compute_score(scheme, {"c2.2": 1, "c2.3": 2}) == Decimal(2)  # the larger only
    assert compute_score(scheme, {"c1": 2, "c2.1": 3, "c3": 2}) == Decimal(7)
    messages = parse_scheme(STEP_WITH_PARTIAL_CREDITS, "proofbench_markdown").messages
    assert [(m.level, m.line) for m in messages] == [(Level.WARNING, 3)]
    assert "Write [additive] on the step if they add up" in messages[0].text


def test_half_points_show_as_1_5_and_whole_ones_as_1():
    scheme = parse_scheme(HALF_POINTS, "proofbench_markdown").scheme
    levels = scheme.checkpoint("c1").award_levels()
    assert [str(level) for level in levels] == ["0", "0.5", "1", "1.5", "2"]
    assert check_awards(scheme, {"c1": "0.7"}) == [
        "c1 (Bound.) cannot be awarded 0.7: allowed values are 0, 0.5, 1, 1.5, 2"
    ]
    assert compute_score(scheme, {"c1": "1.5", "c2": 5}) == Decimal("6.5")
    # scores as pages show them (a grade's score is stored with two decimals)
    assert [number(Decimal(v)) for v in ("1.50", "1.00", "0.50", "7")] == ["1.5", "1", "0.5", "7"]
