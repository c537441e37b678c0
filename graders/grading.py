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

import re
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


# --- The design space: contexts x instructions (graders/services/grids.py) -------------------

INSTRUCTION_PROMPTS = {"flexible": "grade_proof_flexible@v1", "strict": "grade_proof_strict@v1"}
CONTEXT_NOTES = {
    "none": "You are given the problem and the proof only: judge the proof on its own.",
    "reference": (
        "You are given the problem, a reference solution and the proof. The reference is one "
        "correct route, not the only one; where the problem asks for a final answer, it holds "
        "the right one."
    ),
    "scheme": (
        "You are given the problem, a marking scheme and the proof. The scheme's checkpoints "
        "and deductions anchor your count of points; a different valid route earns the points "
        "of the checkpoints that play the same role."
    ),
    "both": (
        "You are given the problem, a reference solution, a marking scheme and the proof. The "
        "reference is one correct route, not the only one; the scheme's checkpoints and "
        "deductions anchor your count of points."
    ),
}


def design_messages(
    *, context: str, instruction: str, problem: str, reference: str, scheme: str, proof: str
) -> list[dict]:
    """The prompt of one design-space cell: the instruction's template with the context's
    sections (a reference solution, the marking scheme, both or neither). Every variant keeps
    the `<assessment>` / `<errors>` / `<score>` contract that `read_reply` reads."""
    sections = []
    if context in ("reference", "both"):
        sections.append(f"\n## Reference solution\n{reference or NO_REFERENCE}\n")
    if context in ("scheme", "both"):
        sections.append(f"\n## Marking scheme\n{scheme or NO_SCHEME}\n")
    return prompts.render(
        INSTRUCTION_PROMPTS[instruction],
        context_note=CONTEXT_NOTES[context],
        problem=problem,
        context="".join(sections),
        proof=proof,
    )


# --- Pairwise picks: which of two proofs is better (graders/services/pick_runs.py) -----------

PICK_PROMPT = "pairwise_pick@v1"
CHOICE_TAG = re.compile(r"<choice>\s*([^<]*?)\s*</choice>", re.I)
POSITIONS = ("first", "second", "tie")


def pick_messages(*, problem: str, first: str, second: str) -> list[dict]:
    return prompts.render(PICK_PROMPT, problem=problem, first=first, second=second)


def read_pick(reply: Completion) -> str:
    """The position a complete reply picked: "first", "second" or "tie". OutputError saying why
    when the reply is incomplete (cut off, reasoning never closed), has no `<choice>` tag, has
    more than one, names anything else, or does not end with it."""
    if reply.incomplete:
        raise OutputError(reply.incomplete)
    body = visible(reply.text)
    tags = list(CHOICE_TAG.finditer(body))
    if not tags:
        raise OutputError("the reply has no <choice>first|second|tie</choice>")
    if len(tags) > 1:
        raise OutputError(f"the reply gives {len(tags)} <choice> tags, not one")
    choice = tags[0].group(1).strip().lower()
    if choice not in POSITIONS:
        raise OutputError(f"<choice> holds {tags[0].group(1)!r}, not first, second or tie")
    if body[tags[0].end() :].strip():
        raise OutputError("the reply goes on after its <choice> tag")
    return choice


__all__ = [
    "PICK_PROMPT",
    "PROMPT_VERSION",
    "GraderReply",
    "OutputError",
    "design_messages",
    "grading_messages",
    "pick_messages",
    "read_pick",
    "read_reply",
]
