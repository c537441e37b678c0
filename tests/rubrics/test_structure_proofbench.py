"""ProofBench marking-scheme Markdown: parsing every rule of the A.7 format, and the renderer."""

from decimal import Decimal

import pytest

from rubrics.structure import (
    DeductionKind,
    Level,
    Partial,
    Rule,
    Scheme,
    parse_proofbench,
    parse_scheme,
    scheme_to_markdown,
)
from tests.rubrics.test_structure_examples import (
    PB_BROKEN,
    PB_BULLETED,
    PB_CHAINS,
    PB_COMPACT,
    PB_PROMPT_SHAPE,
    PB_SINGLE,
    PB_VARIANT,
    RG_APPROACHABILITY,
    RG_MILESTONES,
    RG_PLAIN,
)

D = Decimal


def outline(scheme: Scheme) -> list:
    """(id, points, rule, partial) of every checkpoint, in order."""
    return [
        (cp.id, str(cp.points), cp.rule.value, cp.partial.value) for cp in scheme.all_checkpoints()
    ]


def test_compact_a5_example():
    scheme, messages = parse_proofbench(PB_COMPACT)
    assert messages == []
    assert outline(scheme) == [
        ("c1", "1", "additive", "integer"),
        ("c2", "2", "additive", "integer"),
        ("c3", "2", "additive", "integer"),
        ("c4", "2", "additive", "integer"),
    ]
    assert scheme.checkpoint("c2").title.startswith("Pigeonhole: $n$ polynomials")
    assert [(d.id, d.kind, d.value, d.text) for d in scheme.deductions] == [
        ("d1", DeductionKind.CAP, D(6), "no reduction justification"),
        ("d2", DeductionKind.CAP, D(5), "lemma flawed"),
        ("d3", DeductionKind.CAP, D(3), "stops after PHP"),
        ("d4", DeductionKind.MINUS, D(1), "minor gaps (e.g., not using $r_1 \\neq r_2$)."),
    ]
    assert [z.text for z in scheme.zero_credit] == [
        "Unjustified WLOG",
        "merely stating theorems",
        "specific examples only",
        "noting $P(0) \\neq 0 \\Rightarrow$ nonzero roots.",
    ]


def test_chains_shared_prerequisites_and_nested_larger_only():
    scheme, messages = parse_proofbench(PB_CHAINS)
    assert messages == []
    assert scheme.shared.rule is Rule.MAX and scheme.shared.cap == D(2)
    assert [c.title for c in scheme.chains] == [
        "(idea: pigeonhole on the positions of zero coefficients)",
        "(idea: Newton's inequalities)",
    ]
    assert outline(scheme) == [
        ("s1", "1", "additive", "integer"),
        ("s2", "1", "additive", "integer"),
        ("A1", "2", "additive", "integer"),
        ("A2", "1", "additive", "integer"),
        ("A3", "2", "larger", "integer"),
        ("A3.1", "2", "additive", "integer"),
        ("A3.2", "1", "additive", "integer"),
        ("B1", "3", "additive", "integer"),
        ("B2", "2", "additive", "integer"),
    ]
    a1 = scheme.checkpoint("A1")
    assert (a1.title, a1.description[:20]) == ("Pigeonhole", "the $n$ polynomials ")
    assert scheme.checkpoint("A3").title == (
        "Lemma: two consecutive zero coefficients force a nonreal root"
    )
    assert scheme.chain_totals() == {"A": D(7), "B": D(7)}
    assert [(d.kind.value, str(d.value)) for d in scheme.deductions] == [
        ("cap", "5"),
        ("cap", "3"),
        ("minus", "1"),
        ("minus", "2"),
    ]
    assert scheme.deductions[2].text == "minor gap, e.g. not using $r_1 \\neq r_2$ when dividing."
    assert len(scheme.zero_credit) == 3
    assert scheme.notes == ""  # the rule, total and at-most-one lines are boilerplate


def test_variant_formatting_max_k_group_all_or_nothing_and_notes():
    scheme, messages = parse_proofbench(PB_VARIANT)
    assert [(m.level, m.line) for m in messages] == [(Level.WARNING, 18)]
    assert "Kept as a note" in messages[0].text
    assert scheme.notes == "This scheme was checked against the official solution."
    assert outline(scheme) == [
        ("A1", "1", "additive", "integer"),
        ("A2", "2", "max", "integer"),
        ("A2.1", "1", "additive", "integer"),
        ("A2.2", "1", "additive", "integer"),
        ("A2.3", "1", "additive", "integer"),
        ("A3", "4", "larger", "integer"),
        ("A3.1", "4", "additive", "integer"),
        ("A3.2", "2", "additive", "integer"),
        ("B1", "7", "additive", "none"),
    ]
    assert scheme.checkpoint("A2").cap == D(2)
    assert scheme.chains[0].title == "induction on $n$"
    assert [(d.kind.value, str(d.value), d.text) for d in scheme.deductions] == [
        ("minus", "1", "arithmetic slip that breaks a case of the induction."),
        ("minus", "2", "an unjustified claim that the colouring is unique."),
        ("cap", "4", "the inductive step is only sketched"),
    ]


def test_bulleted_chains_with_labels():
    scheme, messages = parse_proofbench(PB_BULLETED)
    assert messages == []
    assert scheme.notes == ""  # the title, the rule and the Total bullet are boilerplate
    assert [c.title for c in scheme.chains] == [
        "(Synthetic: spiral similarity)",
        "(Complex numbers / coordinates)",
    ]
    assert outline(scheme) == [
        ("A1", "1", "additive", "integer"),
        ("A2", "4", "larger", "integer"),
        ("A2.1", "4", "additive", "integer"),
        ("A2.2", "2", "additive", "integer"),
        ("A3", "2", "additive", "integer"),
        ("B1", "2", "additive", "integer"),
        ("B2", "5", "additive", "integer"),
    ]
    assert (scheme.checkpoint("A1").title, scheme.checkpoint("A1").description[:15]) == (
        "CP1",
        "Defines the poi",
    )
    assert [(d.kind.value, str(d.value)) for d in scheme.deductions] == [
        ("minus", "1"),
        ("cap", "5"),
        ("cap", "3"),
    ]
    assert scheme.deductions[1].text.startswith("Assumes the configuration (e.g., $H$ inside")


def test_the_shape_our_generation_prompt_asks_for():
    scheme, messages = parse_proofbench(PB_PROMPT_SHAPE)
    assert messages == []
    assert outline(scheme) == [
        ("s1", "1", "additive", "integer"),
        ("A1", "2", "additive", "integer"),
        ("A2", "2", "additive", "integer"),
        ("A3", "2", "larger", "integer"),
        ("A3.1", "2", "additive", "integer"),
        ("A3.2", "1", "additive", "integer"),
        ("B1", "6", "additive", "none"),
    ]
    # "Title. What to show." splits at the first full stop, not inside math or after "e.g."
    a1, a3, a32 = (scheme.checkpoint(key) for key in ("A1", "A3", "A3.2"))
    assert (a1.title, a1.description) == (
        "Pigeonhole",
        "Two of the $P_i$ have a zero coefficient in the same inner position.",
    )
    assert (a3.title, a3.description) == (
        "Lemma",
        "Two consecutive zero coefficients forbid $n$ distinct real roots.",
    )
    assert a32.title == "The right idea, e.g. a double root at $0$, with a gap."
    assert scheme.checkpoint("B1").description.endswith("with $P(0) \\neq 0$.")
    assert [(d.kind.value, str(d.value), d.text) for d in scheme.deductions] == [
        ("cap", "5", "The lemma is used without proof."),
        ("minus", "1", "Not using that the roots are distinct."),
        ("cap", "5", "The proof asserts contradictory claims."),
    ]
    assert scheme.notes == ""
    assert scheme.chain_totals() == {"A": Decimal(7), "B": Decimal(7)}


def test_single_path_without_chain_headers():
    scheme, messages = parse_proofbench(PB_SINGLE)
    assert messages == []
    assert [cp.id for cp in scheme.all_checkpoints()] == ["c1", "c2", "c3"]
    assert scheme.checkpoint("c1").title == "Key identity"
    assert scheme.deductions[0].value == D(1)


def test_broken_scheme_parses_with_errors_in_words():
    scheme, messages = parse_proofbench(PB_BROKEN)
    assert scheme is not None  # kept as a draft with its problems listed
    errors = [(m.where, m.line) for m in messages if m.level is Level.ERROR]
    assert errors == [("B1", 7), ("A", 2), ("", None), ("d1", 11)]
    texts = " | ".join(m.text for m in messages)
    assert "worth 2.5 points" in texts
    assert "Chain A can total 8 points, more than 7" in texts
    assert "No chain reaches exactly 7/7" in texts  # A can give 8, B 5.5
    assert "caps the score at 9/7" in texts


@pytest.mark.parametrize(
    ("line", "points", "rule", "cap", "partial", "title"),
    [
        ("- (2 pts) Title here [additive]", "2", "additive", None, "integer", "Title here"),
        ("- [1pt] Setup", "1", "additive", None, "integer", "Setup"),
        ("- **3 pts** Key step", "3", "additive", None, "integer", "Key step"),
        ("- 2 points: Bound on $a_n$", "2", "additive", None, "integer", "Bound on $a_n$"),
        ("- Bound on $a_n$ — 2 pts", "2", "additive", None, "integer", "Bound on $a_n$"),
        ("- (7 pts, all or nothing) Full proof", "7", "additive", None, "none", "Full proof"),
        (
            "- (3 pts) Step \\[additive] [half-point partial credit]",
            "3",
            "additive",
            None,
            "half",
            "Step",
        ),
        ("- **Constructions** **[max 2]**", "2", "max", "2", "integer", "Constructions"),
    ],
)
def test_checkpoint_line_forms(line, points, rule, cap, partial, title):
    children = "\n  - (1 pt) a\n  - (1 pt) b\n  - (1 pt) c" if "max" in line else ""
    scheme, _ = parse_proofbench(f"## Checkpoints\n{line}{children}\n")
    cp = scheme.all_checkpoints()[0]
    assert (str(cp.points), cp.rule.value, cp.cap and str(cp.cap), cp.partial.value, cp.title) == (
        points,
        rule,
        cap,
        partial,
        title,
    )


def test_sub_bullets_without_points_are_the_description():
    text = "## Checkpoints\n- (7 pts) Whole proof\n  - includes the base case\n  - and the step\n"
    scheme, messages = parse_proofbench(text)
    cp = scheme.all_checkpoints()[0]
    assert (cp.id, cp.children, cp.description) == ("c1", [], "includes the base case and the step")
    assert messages == []


def test_bullet_without_points_is_kept_as_a_note_with_its_line():
    text = "## Checkpoints\n- (7 pts) Whole proof\n- Be generous with notation\n"
    scheme, messages = parse_proofbench(text)
    assert scheme.notes == "- Be generous with notation"
    assert [(m.level, m.line) for m in messages] == [(Level.WARNING, 3)]


def test_deduction_without_amount_is_a_note():
    text = (
        "## Checkpoints\n- (7 pts) Proof\n## Deductions\n- Sloppy writing\n- Apply at most one.\n"
    )
    scheme, messages = parse_proofbench(text)
    assert scheme.deductions == []
    assert "Sloppy writing" in scheme.notes
    assert [m.line for m in messages] == [4]


@pytest.mark.parametrize("text", ["", "   \n", "## Checkpoints\n- no points here\n", "Just prose."])
def test_nothing_to_parse_gives_none_and_an_error(text):
    scheme, messages = parse_proofbench(text)
    assert scheme is None
    assert messages[-1].level is Level.ERROR


@pytest.mark.parametrize(
    "example",
    [PB_COMPACT, PB_CHAINS, PB_VARIANT, PB_SINGLE, PB_BROKEN, PB_BULLETED, PB_PROMPT_SHAPE],
    ids=lambda t: t[:25],
)
def test_render_then_parse_gives_the_same_scheme(example):
    scheme, messages = parse_proofbench(example)
    markdown = scheme_to_markdown(scheme)
    again, again_messages = parse_proofbench(markdown)
    assert again == scheme
    assert [m.text for m in again_messages if m.is_error] == [
        m.text for m in messages if m.is_error
    ]
    assert scheme_to_markdown(again) == markdown


@pytest.mark.parametrize(
    ("example", "design"),
    [(RG_PLAIN, "plain"), (RG_APPROACHABILITY, "approachability"), (RG_MILESTONES, "milestones")],
)
def test_refgrader_schemes_render_and_parse_back(example, design):
    scheme = parse_scheme(example, f"refgrader_{design}").scheme
    again = parse_scheme(scheme_to_markdown(scheme), "markdown").scheme
    assert again == scheme
    assert all(cp.partial is Partial.HALF for cp in again.leaves())


def test_rendered_markdown_reads_like_the_a7_format():
    scheme, _ = parse_proofbench(PB_CHAINS)
    markdown = scheme_to_markdown(scheme)
    assert markdown.splitlines()[0] == "## 1. Checkpoints (max 7 pts total)"
    assert "**Score exactly one chain" in markdown
    assert "**Shared prerequisites** [max 2] — count at most once regardless of chain." in markdown
    assert (
        "- (2 pts) Lemma: two consecutive zero coefficients force a nonreal root "
        "(award the larger only)" in markdown
    )
    assert "  - (1 pt) Correct idea with a gap" in markdown
    assert "**Total (max 7):** Chain A: 2 + 2 + 1 + 2 = 7; Chain B: 2 + 3 + 2 = 7." in markdown
    assert "- **Cap at 5/7:** the lemma is used" in markdown
    assert "- **-2 pts:** circular use" in markdown


PARTIAL_NESTED = r"""## Checkpoints
- (3 pts) **Main bound** — proves $a_n \le 2^n$. [additive]
  - *Partial credit (award the larger only):* (1 pt) proves the bound for even $n$.
- (4 pts) Construction [additive]
  - (2 pts) works for odd $n$ only
"""


def test_nested_partial_credit_under_a_full_step_keeps_the_full_points():
    scheme, messages = parse_proofbench(PARTIAL_NESTED)
    assert outline(scheme) == [
        ("c1", "3", "larger", "integer"),
        ("c1.1", "3", "additive", "integer"),
        ("c1.2", "1", "additive", "integer"),
        ("c2", "4", "larger", "integer"),
        ("c2.1", "4", "additive", "integer"),
        ("c2.2", "2", "additive", "integer"),
    ]
    assert scheme.checkpoint("c1.1").title == "Full credit for this step"
    assert scheme.checkpoint("c1.2").title == "*Partial credit:* proves the bound for even $n$."
    # only the step without "award the larger only" needed reading: say so
    assert [(m.level, m.line) for m in messages] == [(Level.WARNING, 4)]
    assert "read as: the full points, or the larger" in messages[0].text
    assert parse_proofbench(scheme_to_markdown(scheme))[0] == scheme


@pytest.mark.parametrize(
    "headings",
    [
        ("## 1. Checkpoints (max 7 pts total)", "## 2. Zero-credit items", "## 3. Deductions"),
        ("**1. Checkpoints**", "**2. No-credit items**", "**3. Deductions**"),
        ("### Check-points", "### Zero credit", "### Deductions and caps"),
        ("1. **Checkpoints (max 7 pts total)**", "2. **Zero-credit items**", "3. **Deductions**"),
        ("Checkpoints:", "Zero-credit items:", "Deductions:"),
    ],
)
def test_section_heading_forms(headings):
    checkpoints, zero, deductions = headings
    text = (
        f"{checkpoints}\n- (7 pts) The proof\n\n{zero}\n- Restating\n\n"
        f"{deductions}\n- Cap at 3/7: no lemma\n\n## 4. Notes\nNothing else.\n"
    )
    scheme, messages = parse_proofbench(text)
    assert messages == []
    assert [z.text for z in scheme.zero_credit] == ["Restating"]
    assert [(d.kind, d.value) for d in scheme.deductions] == [(DeductionKind.CAP, D(3))]
    assert scheme.notes == "Nothing else."


def test_chain_headers_in_other_words_and_with_their_total():
    text = (
        "## Checkpoints\n### Approach 1: induction (7 pts)\n- (7 pts) Whole induction\n"
        "### Approach 2: contradiction [max 7]\n- (4 pts) Assume a counterexample\n"
        "- (4 pts) Reach a contradiction\n"
    )
    scheme, messages = parse_proofbench(text)
    assert messages == []
    assert [(c.id, c.title, c.rule.value) for c in scheme.chains] == [
        ("A", "induction", "additive"),
        ("B", "contradiction", "max"),
    ]
    assert scheme.chain_totals() == {"A": D(7), "B": D(7)}


@pytest.mark.parametrize(
    ("line", "kind", "value", "text"),
    [
        ("- Cap at 5/7: lemma unproved", "cap", "5", "lemma unproved"),
        ("- [cap 5/7] Lemma unproved.", "cap", "5", "Lemma unproved."),
        ("- cap 6/7 if no reduction", "cap", "6", "no reduction"),
        ("- Capped at 4 points when the step is sketched", "cap", "4", "the step is sketched"),
        (
            "- Maximum 3/7 if only the construction is given",
            "cap",
            "3",
            "only the construction is given",
        ),
        ("- At most 2/7 for a proof by example", "cap", "2", "a proof by example"),
        ("- **−1:** minor gap", "minus", "1", "minor gap"),
        ("- [-2] Circular reasoning.", "minus", "2", "Circular reasoning."),
        ("- -1pt for minor gaps", "minus", "1", "minor gaps"),
        ("- Minor gap (−1)", "minus", "1", "Minor gap"),
        ("- Deduct 2 points for an unjustified claim", "minus", "2", "an unjustified claim"),
    ],
)
def test_deduction_forms(line, kind, value, text):
    scheme, _ = parse_proofbench(f"## Checkpoints\n- (7 pts) Proof\n## Deductions\n{line}\n")
    [deduction] = scheme.deductions
    assert (deduction.kind.value, str(deduction.value), deduction.text) == (kind, value, text)
