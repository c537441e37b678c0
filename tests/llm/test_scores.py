from decimal import Decimal

import pytest

from llm.scores import boxed_contents, score_number, strip_think, verifier_score
from llm.whole import unclosed_think

OPEN = "Here is my evaluation of the solution:\nStep 1 is fine.\n"


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


def test_boxed_contents_are_brace_balanced_and_skip_unclosed():
    assert boxed_contents(r"\boxed{\frac{1}{2}} and \boxed{x^{2}} then \boxed{7") == [
        r"\frac{1}{2}",
        "x^{2}",
    ]
    assert boxed_contents(r"\boxed{\{a\}}") == [r"\{a\}"]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("1", Decimal("1")),
        ("0", Decimal("0")),
        ("0.5", Decimal("0.5")),
        (r"\frac12", Decimal("0.5")),
        (r"\frac{1}{2}", Decimal("0.5")),
        (r"\dfrac{1}{2}", Decimal("0.5")),
        ("1/2", Decimal("0.5")),
        ("$1$", Decimal("1")),
        (r"\text{1}", Decimal("1")),
        ("7/7", Decimal("1")),
        ("correct", None),
        ("1/0", None),
    ],
)
def test_score_number(raw, expected):
    assert score_number(raw) == expected


@pytest.mark.parametrize(
    ("text", "score", "kept"),
    [
        (
            OPEN + "Based on my evaluation, the final overall score should be:\n\\boxed{1}",
            "1",
            True,
        ),
        (OPEN + "the final overal score should be: \\boxed{\\frac12}", "0.5", True),
        (
            OPEN
            + "The proof writes \\boxed{1} at the end.\nthe final overall score should be: \\boxed{0}",
            "0",
            True,
        ),
        (
            "<think>\\boxed{1}</think>" + OPEN + "final overall score should be \\boxed{0.5}",
            "0.5",
            True,
        ),
        ("Some text without the opening. \\boxed{1}", "1", False),
        (OPEN + "the final overall score should be: \\boxed{0.7}", None, False),
        (OPEN + "the final overall score should be: \\boxed{1", None, False),
        (OPEN + "no box at all", None, False),
    ],
)
def test_verifier_score(text, score, kept):
    result = verifier_score(text)
    assert result.score == (Decimal(score) if score else None)
    assert result.kept_contract is kept
    assert bool(result.problem) is not kept


def test_text_counts_only_when_whole(settings):
    from llm.meta_scores import meta_verifier_score
    from llm.parsers import OutputError, score_xml
    from llm.whole import not_whole

    good = (
        "Here is my evaluation of the solution: fine.\n"
        "Based on my evaluation, the final overall score should be: \\boxed{1}"
    )
    assert verifier_score(good).score == 1 and not_whole(good) == ""
    cut = verifier_score("<think>Step 2 holds, so \\boxed{1} maybe; but step 3")
    assert cut.score is None and "never closed" in cut.problem
    settings.LLM_MAX_REPLY_BYTES = 100  # the setting is read at each call
    assert "over the limit of 100" in verifier_score(good).problem
    assert meta_verifier_score(good).score is None
    settings.LLM_MAX_REPLY_BYTES = 200_000
    with pytest.raises(OutputError, match="<assessment> is never closed"):
        score_xml("<assessment>Step 1 holds and<score>7</score>")
    assert score_xml("<assessment>ok</assessment><score>7</score>").score == 7
