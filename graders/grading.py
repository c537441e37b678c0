"""The prompt an automatic grader gets for one proof, and the strict reading of its reply.

The grader sees the problem, a reference solution, the marking scheme and the proof, as in
ProofBench's REF+MS setting (appendix A.8), from the template `grade_proof@<version>` in
llm/prompts/templates: the mathematics decides, the scheme guides. Its reply keeps ProofBench's
evaluator contract: `<assessment>...</assessment>`, `<errors>...</errors>` and `<score>N</score>`
with N an integer from 0 to 7. A reply that stopped at the token limit, left its `<think>` block
open, lacks the score, gives it twice or leaves it open, or gives anything but an integer from 0
to 7 is a failed prediction (`llm.parsers.score_tag`).
Replies in IMO-Bench's ProofAutoGrader contract (`<points>N out of 7</points>`) are read as well.
"""

from __future__ import annotations

from dataclasses import dataclass

from llm import prompts
from llm.client import Completion
from llm.parsers import (
    POINTS_OUT_OF_7,
    OutputError,
    opens_tag,
    points_out_of_7,
    score_xml,
    visible,
)

PROMPT_VERSION = "grade_proof@v2"
NO_REFERENCE = "(none recorded)"
NO_SCHEME = "(No marking scheme: grade by the 0-7 scale, 7 for a complete and correct proof.)"


@dataclass(frozen=True)
class GraderReply:
    score: int
    assessment: str
    errors: list[str]


def grading_messages(
    *, problem: str, reference: str, scheme: str, proof: str, prompt: str = PROMPT_VERSION
) -> list[dict]:
    return prompts.render(
        prompt,
        problem=problem,
        reference=reference or NO_REFERENCE,
        scheme=scheme or NO_SCHEME,
        proof=proof,
    )


def read_reply(reply: Completion) -> GraderReply:
    """The score and notes of a complete reply; OutputError saying why when it is incomplete or
    breaks the contract. A reply in IMO-Bench's ProofAutoGrader contract (`<points>N out of
    7</points>`, no <score>) is read too: its score is N, its reasoning the assessment."""
    if reply.incomplete:
        raise OutputError(reply.incomplete)
    text = reply.text
    if not opens_tag(text, "score") and opens_tag(text, "points"):
        score = points_out_of_7(text)
        reasoning = POINTS_OUT_OF_7.sub("", visible(text)).strip()
        return GraderReply(int(score), reasoning, [])
    parsed = score_xml(text)
    errors = [
        line.strip("-• ").strip()
        for line in parsed.fields.get("errors", "").splitlines()
        if line.strip() and line.strip().lower() != "none"
    ]
    return GraderReply(parsed.score, parsed.fields.get("assessment", ""), errors)


__all__ = ["PROMPT_VERSION", "GraderReply", "OutputError", "grading_messages", "read_reply"]
