"""Scripted verifier and meta-verifier outputs for the fake OpenAI server, and helpers that
script the server per proof (the proof's text is the needle) and per analysis."""

from tests.llm.fake_openai import text

VERIFIER_NEEDLE = "Here is my evaluation of the solution:\n(your step-by-step assessment)"
META_NEEDLE = 'Here is my analysis of the "solution evaluation":\n(your review)'


def analysis(score: str, issue: str = "") -> str:
    body = issue or "Every step is justified; I checked the induction step twice."
    return (
        f"Here is my evaluation of the solution:\n\n{body}\n\n"
        f"Based on my evaluation, the final overall score should be:\n\\boxed{{{score}}}"
    )


CLEAN = analysis("1")
GAP = analysis("0.5", "Step 2 divides by $x$ without checking that $x \\neq 0$.")
FATAL = analysis("0", "The bound in step 3 is false for $n = 2$, so the proof collapses.")
BROKEN = "I think the solution is fine overall, probably deserving full marks."


def meta(rating: str) -> str:
    return (
        'Here is my analysis of the "solution evaluation":\n\nThe claimed defect is real and '
        "described accurately.\n\n"
        f'Based on my analysis, I will rate the "solution evaluation" as:\n\\boxed{{{rating}}}'
    )


CONFIRM = meta("1")
HALF = meta("0.5")
REJECT = meta("0")


def script_proof(fake, proof, *replies):
    """The verifier's replies for `proof` (needle: its text and the verifier prompt)."""
    fake.on((VERIFIER_NEEDLE, proof.text), *[text(r) for r in replies])


def script_meta(fake, needle: str, *replies):
    """The meta-verifier's replies for the analyses containing `needle`."""
    fake.on((META_NEEDLE, needle), *[text(r) for r in replies])
