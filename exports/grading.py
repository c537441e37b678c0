"""The prompt an automatic grader gets for one proof, and the reading of its reply (pure Python).

The grader sees the problem, a reference solution, the marking scheme and the proof, as in
ProofBench's REF+MS setting; the wording is ours. Its reply keeps ProofBench's evaluator
contract: `<assessment>...</assessment>`, `<errors>...</errors>` and `<score>N</score>` with N
an integer from 0 to 7; replies in IMO-Bench's ProofAutoGrader contract (`<points>N out of
7</points>`) are read as well.
"""

from __future__ import annotations

from dataclasses import dataclass

from llm.parsers import (
    POINTS_OUT_OF_7,
    OutputError,
    points_out_of_7,
    score_xml,
    visible,
    xml_tag,
)

PROMPT_VERSION = "grade_proof@v1"

SYSTEM = """You are an experienced olympiad grader. You mark one student proof at a time on the
0-7 scale, strictly by the marking scheme you are given, using the reference solution only to
understand the problem. Credit a different but valid approach as the scheme says for equivalent
arguments. Never reward a claim that is asserted without proof."""

USER = """Grade the proof below.

## Problem
{problem}

## Reference solution
{reference}

## Marking scheme
{scheme}

## The proof to grade
{proof}

Work through the proof against each checkpoint and deduction of the scheme. Then reply with
exactly these three tags, in this order:
<assessment>what the proof does and does not establish, checkpoint by checkpoint</assessment>
<errors>each error on its own line (or "none")</errors>
<score>the integer score from 0 to 7</score>"""

NO_SCHEME = "(No marking scheme: grade by the 0-7 scale, 7 for a complete and correct proof.)"


@dataclass(frozen=True)
class GraderReply:
    score: float
    assessment: str
    errors: list[str]


def grading_messages(*, problem: str, reference: str, scheme: str, proof: str) -> list[dict]:
    user = (
        USER.replace("{problem}", problem)
        .replace("{reference}", reference or "(none recorded)")
        .replace("{scheme}", scheme or NO_SCHEME)
        .replace("{proof}", proof)
    )
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def read_reply(text: str) -> GraderReply:
    """The score and notes of a reply; OutputError when it breaks the contract. A reply in
    IMO-Bench's ProofAutoGrader contract (`<points>N out of 7</points>`, no <score>) is read
    too: its score is N, its reasoning the assessment."""
    if xml_tag(text, "score") is None and xml_tag(text, "points") is not None:
        score = points_out_of_7(text)
        reasoning = POINTS_OUT_OF_7.sub("", visible(text)).strip()
        return GraderReply(float(score), reasoning, [])
    parsed = score_xml(text)
    errors = [
        line.strip("-• ").strip()
        for line in parsed.fields.get("errors", "").splitlines()
        if line.strip() and line.strip().lower() != "none"
    ]
    return GraderReply(float(parsed.score), parsed.fields.get("assessment", ""), errors)


__all__ = ["PROMPT_VERSION", "GraderReply", "OutputError", "grading_messages", "read_reply"]
