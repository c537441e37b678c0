"""Reading scores out of model text: `<think>` blocks, brace-balanced `\\boxed{}`, and the one
rule of the boxed verdict contracts.

The verifier contract (DeepSeekMath-V2, appendix A.2): the analysis opens with
"Here is my evaluation of the solution:" and ends with "Based on my evaluation, the final overall
score should be:" followed by `\\boxed{0}`, `\\boxed{0.5}` or `\\boxed{1}`. The meta-verifier's
contract (A.3, `llm.meta_scores`) has the same shape with its own phrases.

One rule reads both (`boxed_verdict`), for runs and imports alike. A verdict counts only when it
is whole: the text is whole (`llm.whole`), it holds the contract's opening phrase and its final
phrase, and after the last final phrase there is exactly one box, closed, holding a value of the
scale (0, 0.5 or 1, also written `\\frac12`, `1/2`, `1.0`), with nothing but spacing, a colon,
`$`, `\\[`, `\\(` or `**` between the phrase and the box. Anything else breaks the contract: no
score, and the reason in words. A box anywhere else (one the proof wrote, quoted by the analysis)
is never the verdict. Real outputs misspell the phrase ("final overal score") and wrap the answer
in `<think>` reasoning: both are read.
"""

import re
from dataclasses import dataclass
from decimal import Decimal
from typing import NamedTuple

from llm.whole import THINK_CLOSE, not_whole

EVALUATION_OPENING = re.compile(r"here is my evaluation of the solution\s*:?", re.IGNORECASE)
FINAL_SCORE_PHRASE = re.compile(r"final\s+overall?\s+score\s+should\s+be\s*:?", re.IGNORECASE)
BOXED = re.compile(r"\\boxed\s*\{")
BEFORE_BOX = re.compile(r"(?:\s|[:*$]|\\\[|\\\()*")
VERIFIER_SCORES = (Decimal("0"), Decimal("0.5"), Decimal("1"))

_HALF_FORMS = re.compile(
    r"^(?:\\[dt]?frac\s*\{?\s*1\s*\}?\s*\{?\s*2\s*\}?|1\s*/\s*2|0?\.50*)$", re.IGNORECASE
)
_WHOLE_FORMS = re.compile(r"^([01])(?:\.0*)?$")


def strip_think(text: str) -> str:
    """Keeps only what follows the last `</think>`; text without one is returned unchanged."""
    if "</" not in text:  # a plain substring search, before the regex (most texts have none)
        return text
    parts = THINK_CLOSE.split(text)
    return parts[-1].lstrip() if len(parts) > 1 else text


class Box(NamedTuple):
    start: int  # of `\boxed`
    end: int  # after the closing `}`, or the end of the text when the box is never closed
    content: str
    closed: bool


def boxed_spans(text: str) -> list[Box]:
    """Every `\\boxed{...}` of the text, brace-balanced, in order; a box inside another is part
    of it. A box never closed (the text was cut inside it) runs to the end, `closed` false."""
    found: list[Box] = []
    for match in BOXED.finditer(text):
        if found and match.start() < found[-1].end:
            continue
        depth, index = 1, match.end()
        while index < len(text) and depth:
            char = text[index]
            if char == "\\":
                index += 2
                continue
            depth += {"{": 1, "}": -1}.get(char, 0)
            index += 1
        closed = depth == 0
        end = index if closed else len(text)
        found.append(Box(match.start(), end, text[match.end() : end - closed], closed))
    return found


def scale_value(raw: str) -> Decimal | None:
    """A boxed value as a value of the 0 / 0.5 / 1 scale: `1`, `0`, `1.0`, `0.5`, `\\frac12`,
    `\\frac{1}{2}`, `1/2`, inside `$...$` or `\\text{}` too; None for anything else (`0.7`,
    `7/7`, `1 or 0`, words)."""
    value = raw.strip().strip("$").strip()
    value = re.sub(r"\\(?:text|mathrm|textbf|mathbf)\s*\{([^{}]*)\}", r"\1", value).strip()
    if _HALF_FORMS.match(value):
        return Decimal("0.5")
    whole = _WHOLE_FORMS.match(value)
    return Decimal(whole.group(1)) if whole else None


@dataclass(frozen=True)
class VerifierScore:
    """A verdict read by its contract: a score exactly when the contract was kept, else the
    reason in words (`problem`)."""

    score: Decimal | None
    kept_contract: bool
    problem: str = ""

    def __post_init__(self) -> None:
        if (self.score is not None) is not self.kept_contract or self.kept_contract == bool(
            self.problem
        ):
            raise ValueError("a verdict has a score exactly when it kept its contract")


def broken(problem: str) -> VerifierScore:
    return VerifierScore(None, False, problem)


@dataclass(frozen=True)
class BoxedContract:
    """The phrases of one boxed verdict contract, and what its value is called."""

    opening: re.Pattern
    opening_words: str
    final: re.Pattern
    final_words: str
    noun: str


VERIFIER_CONTRACT = BoxedContract(
    opening=EVALUATION_OPENING,
    opening_words="Here is my evaluation of the solution:",
    final=FINAL_SCORE_PHRASE,
    final_words="the final overall score should be:",
    noun="score",
)


def boxed_verdict(text: str, contract: BoxedContract) -> VerifierScore:
    """The verdict of `text` under `contract` (see the module's docstring), or why there is
    none."""
    if problem := not_whole(text):
        return broken(problem)
    body = strip_think(text)
    finals = list(contract.final.finditer(body))
    if not finals:
        elsewhere = (
            " (a \\boxed{} elsewhere in it is not the verdict)" if BOXED.search(body) else ""
        )
        return broken(f'the text has no final phrase "{contract.final_words}"{elsewhere}')
    after = finals[-1].end()
    boxes = boxed_spans(body[after:])
    if not boxes:
        return broken(f'nothing is boxed after "{contract.final_words}" (the text ends there?)')
    if len(boxes) > 1:
        return broken(
            f'{len(boxes)} boxes follow "{contract.final_words}": a verdict has exactly one'
        )
    box = boxes[0]
    if not box.closed:
        return broken(
            f'the \\boxed{{ after "{contract.final_words}" is never closed: the text was cut off'
        )
    if not BEFORE_BOX.fullmatch(body, after, after + box.start):
        return broken(f'words stand between "{contract.final_words}" and its \\boxed{{}}')
    value = scale_value(box.content)
    if value is None:
        return broken(f"the boxed {contract.noun} {box.content.strip()[:40]!r} is not 0, 0.5 or 1")
    if not contract.opening.search(body, 0, finals[-1].start()):
        return broken(f'the text does not open with "{contract.opening_words}"')
    return VerifierScore(value, True)


def verifier_score(text: str) -> VerifierScore:
    """The score of a verifier analysis under DeepSeekMath-V2's contract (A.2), or why it has
    none."""
    return boxed_verdict(text, VERIFIER_CONTRACT)
