"""The boxed verdict contracts (verifier A.2, meta-verifier A.3): a score only from a whole verdict.

The texts are shaped like real verifier output (an evaluation that quotes the proof's own boxed
answer, Markdown, TeX, reasoning blocks) and written for these tests."""

from decimal import Decimal

import pytest

from llm.meta_scores import meta_verifier_score
from llm.scores import VerifierScore, boxed_spans, scale_value, strip_think, verifier_score
from llm.whole import unclosed_think

EVALUATION = r"""Here is my evaluation of the solution:

The solution claims that the only pair is $(a, b) = (2, 3)$ and writes its answer as
$\boxed{(2, 3)}$ at the end; it also boxes the intermediate bound \boxed{1} in step 2.

**Step 1.** Reducing modulo 4 is correct: a square is 0 or 1 mod 4, so $b$ must be odd.
I first doubted the case $a = 1$, but it is excluded by the hypothesis $a > 1$.

**Step 2.** The bound $b < 2a$ follows from the inequality of step 1. Correct.

**Step 3.** The final check of $(2, 3)$ is carried out explicitly.

"""
FINAL = "Based on my evaluation, the final overall score should be:"


def verdict(tail: str, evaluation: str = EVALUATION) -> str:
    return evaluation + tail


def test_strip_think_keeps_what_follows_the_last_close():
    assert strip_think("<think>draft \\boxed{0}</think>\n\nAnswer") == "Answer"
    assert strip_think("a</think>b</THINK> c") == "c"
    assert strip_think("no reasoning block") == "no reasoning block"


def test_unclosed_think_is_a_reasoning_block_no_close_ends():
    assert unclosed_think("<think>Let me see, \\boxed{1}")
    assert unclosed_think("<think>a</think> b <THINK> c")
    assert not unclosed_think("<think>a</think> Here is my evaluation")
    assert not unclosed_think("reasoning without its opening tag</think> answer")
    assert not unclosed_think("no reasoning block")


def test_boxes_are_brace_balanced_and_an_unclosed_one_runs_to_the_end():
    boxes = boxed_spans(r"\boxed{\frac{1}{2}} and \boxed{x^{2}} then \boxed{7")
    assert [(box.content, box.closed) for box in boxes] == [
        (r"\frac{1}{2}", True),
        ("x^{2}", True),
        ("7", False),
    ]
    assert [box.content for box in boxed_spans(r"\boxed{\{a\}}")] == [r"\{a\}"]
    assert len(boxed_spans(r"\boxed{\boxed{1}}")) == 1  # a box inside another is part of it


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("1", "1"),
        ("0", "0"),
        ("1.0", "1"),
        ("0.5", "0.5"),
        (".5", "0.5"),
        (r"\frac12", "0.5"),
        (r"\frac{1}{2}", "0.5"),
        (r"\dfrac{1}{2}", "0.5"),
        ("1/2", "0.5"),
        ("$1$", "1"),
        (r"\text{1}", "1"),
        ("7/7", None),
        ("0.7", None),
        ("2", None),
        ("1 or 0", None),
        ("correct", None),
    ],
)
def test_scale_value_takes_only_values_of_the_scale(raw, expected):
    assert scale_value(raw) == (Decimal(expected) if expected else None)


WHOLE = [
    ("the contract's own layout", verdict(f"{FINAL}\n\\boxed{{1}}"), "1"),
    ("a half written as a fraction", verdict(f"{FINAL}\n\n$$\\boxed{{\\frac12}}$$"), "0.5"),
    (
        "the misspelling real outputs carry, in bold",
        verdict("Based on my evaluation, the final overal score should be: **\\boxed{0}**"),
        "0",
    ),
    (
        "reasoning first, closed",
        "<think>The bound in step 2 holds, so \\boxed{0.5} at most?</think>\n"
        + verdict(f"{FINAL}\n\\boxed{{1}}.\n\nThe argument is complete."),
        "1",
    ),
]


@pytest.mark.parametrize(("form", "text", "score"), WHOLE, ids=[w[0] for w in WHOLE])
def test_a_whole_verdict_has_its_score(form, text, score):
    result = verifier_score(text)
    assert result == VerifierScore(Decimal(score), True, "")


BROKEN = [
    ("cut inside the final box", verdict(f"{FINAL}\n\\boxed{{0"), "never closed"),
    ("cut inside the final box, no digit yet", verdict(f"{FINAL}\n\\boxed{{"), "never closed"),
    ("cut right after the final phrase", verdict(FINAL), "nothing is boxed after"),
    ("cut right after the final phrase, a newline", verdict(FINAL + "\n\n"), "nothing is boxed"),
    (
        "no final phrase at all (the proof's boxes are quoted above)",
        EVALUATION + "Overall the proof is complete and rigorous.",
        "no final phrase",
    ),
    (
        "cut in the middle of the evaluation",
        EVALUATION[: EVALUATION.index("**Step 2.**")],
        "no final phrase",
    ),
    (
        "two boxes after the phrase",
        verdict(f"{FINAL} \\boxed{{0}} or perhaps \\boxed{{1}}"),
        "2 boxes",
    ),
    (
        "a box, then words, then another",
        verdict(f"{FINAL}\n\\boxed{{1}}\n\nOn reflection \\boxed{{0}}."),
        "2 boxes",
    ),
    ("a value off the scale", verdict(f"{FINAL}\n\\boxed{{0.7}}"), "is not 0, 0.5 or 1"),
    ("a score out of seven", verdict(f"{FINAL}\n\\boxed{{7/7}}"), "is not 0, 0.5 or 1"),
    ("both values in one box", verdict(f"{FINAL}\n\\boxed{{0 \\text{{ or }} 1}}"), "is not 0, 0.5"),
    ("words before the box", verdict(f"{FINAL} 0, or to be generous \\boxed{{1}}"), "words stand"),
    (
        "an earlier whole verdict, then a restart cut after the phrase",
        verdict(f"{FINAL}\n\\boxed{{1}}\n\nWait, step 2 needs $a > 1$. So {FINAL}"),
        "nothing is boxed after",
    ),
    (
        "cut inside the reasoning block",
        "<think>Step 2 is fine, so \\boxed{1}; but step 3",
        "reasoning block",
    ),
    (
        "no opening phrase",
        EVALUATION.replace("Here is my evaluation of the solution:", "My notes:")
        + f"{FINAL}\n\\boxed{{1}}",
        "does not open with",
    ),
]


@pytest.mark.parametrize(("form", "text", "why"), BROKEN, ids=[b[0] for b in BROKEN])
def test_anything_but_a_whole_verdict_is_a_break_with_no_score(form, text, why):
    result = verifier_score(text)
    assert result.score is None and result.kept_contract is False
    assert why in result.problem and len(result.problem) <= 200


def test_the_score_and_the_contract_flag_cannot_disagree():
    with pytest.raises(ValueError, match="exactly when"):
        VerifierScore(Decimal("1"), False, "no final phrase")
    with pytest.raises(ValueError, match="exactly when"):
        VerifierScore(None, True)


META = (
    'Here is my analysis of the "solution evaluation":\n\nThe evaluation says step 2 assumes '
    "$a > 1$; the hypothesis gives it, so that defect does not exist. Its score of \\boxed{0} "
    "is therefore too harsh.\n\n"
)
RATE = 'Based on my analysis, I will rate the "solution evaluation" as:'


@pytest.mark.parametrize(
    ("text", "score", "why"),
    [
        (f"{META}{RATE}\n\\boxed{{0}}", "0", ""),
        (f"{META}{RATE}\n\\boxed{{0.5", None, "never closed"),
        (f"{META}{RATE}", None, "nothing is boxed after"),
        (META, None, "no final phrase"),
        (f"{META}{RATE} \\boxed{{0}} or \\boxed{{0.5}}", None, "2 boxes"),
        (f"{META}{RATE} \\boxed{{3}}", None, "rating '3' is not 0, 0.5 or 1"),
    ],
)
def test_the_meta_verifier_rating_follows_the_same_rule(text, score, why):
    result = meta_verifier_score(text)
    assert result.score == (Decimal(score) if score else None)
    assert result.kept_contract is (score is not None) and why in result.problem


def test_text_counts_only_when_whole(settings):
    good = verdict(f"{FINAL} \\boxed{{1}}")
    assert verifier_score(good).score == 1
    settings.LLM_MAX_REPLY_BYTES = 100  # the setting is read at each call
    assert "over the limit of 100" in verifier_score(good).problem
    assert meta_verifier_score(f"{META}{RATE} \\boxed{{1}}").score is None
