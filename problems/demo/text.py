"""Shared wording of the demo verifier analyses."""

OPENING = "Here is my evaluation of the solution:"
CLOSING = "Based on my evaluation, the final overall score should be:"


def analysis(body: str, score: str) -> str:
    """A verifier analysis in DeepSeekMath-V2's output contract: the opening phrase, the
    evaluation, and the score (1, 0.5 or 0) boxed after the closing phrase."""
    return f"{OPENING}\n\n{body.strip()}\n\n{CLOSING} \\boxed{{{score}}}"
