"""Reading scores out of model text: `<think>` blocks, brace-balanced `\\boxed{}`, verifier output.

The verifier contract (DeepSeekMath-V2, appendix A.2): the analysis opens with
"Here is my evaluation of the solution:" and ends with "... the final overall score should be:"
followed by `\\boxed{0}`, `\\boxed{0.5}` or `\\boxed{1}`. Real outputs misspell the phrase
("final overal score"), wrap it in `<think>` reasoning, and quote boxes from the proof they
assess, so the score is the box that follows the key phrase, else the last box of the text.
"""

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from llm.whole import THINK_CLOSE, not_whole

EVALUATION_OPENING = re.compile(r"here is my evaluation of the solution\s*:?", re.IGNORECASE)
FINAL_SCORE_PHRASE = re.compile(r"final\s+overall?\s+score\s+should\s+be", re.IGNORECASE)
BOXED = re.compile(r"\\boxed\s*\{")
VERIFIER_SCORES = (Decimal("0"), Decimal("0.5"), Decimal("1"))

_HALF_FORMS = re.compile(
    r"^(?:\\[dt]?frac\s*\{?\s*1\s*\}?\s*\{?\s*2\s*\}?|1\s*/\s*2|\.5|0\.50*)$", re.IGNORECASE
)


def strip_think(text: str) -> str:
    """Keeps only what follows the last `</think>`; text without one is returned unchanged."""
    if "</" not in text:  # a plain substring search, before the regex (most texts have none)
        return text
    parts = THINK_CLOSE.split(text)
    return parts[-1].lstrip() if len(parts) > 1 else text


def boxed_spans(text: str) -> list[tuple[int, int, str]]:
    """Every brace-balanced `\\boxed{...}`: (start of `\\boxed`, end after `}`, contents).

    An unclosed box (truncated output) is left out.
    """
    found = []
    for match in BOXED.finditer(text):
        depth, index = 1, match.end()
        while index < len(text) and depth:
            char = text[index]
            if char == "\\":
                index += 2
                continue
            depth += {"{": 1, "}": -1}.get(char, 0)
            index += 1
        if depth == 0:
            found.append((match.start(), index, text[match.end() : index - 1]))
    return found


def boxed_contents(text: str) -> list[str]:
    return [content for _, _, content in boxed_spans(text)]


def score_number(raw: str) -> Decimal | None:
    """A boxed score as a number: `1`, `0.5`, `\\frac12`, `\\frac{1}{2}`, `1/2`, `7/7`..."""
    value = raw.strip().strip("$").strip()
    value = re.sub(r"\\(?:text|mathrm|textbf|mathbf)\s*\{([^{}]*)\}", r"\1", value).strip()
    if _HALF_FORMS.match(value):
        return Decimal("0.5")
    fraction = re.fullmatch(r"(\d+(?:\.\d+)?)\s*/\s*(\d+(?:\.\d+)?)", value)
    try:
        if fraction:
            denominator = Decimal(fraction.group(2))
            return Decimal(fraction.group(1)) / denominator if denominator else None
        return Decimal(value)
    except InvalidOperation:
        return None


@dataclass(frozen=True)
class VerifierScore:
    score: Decimal | None
    kept_contract: bool
    problem: str = ""


def verifier_score(text: str) -> VerifierScore:
    """The score of a verifier analysis, whether the text kept the output contract, and why not.

    The score is the first box after the last "final overall score should be" (after any
    `</think>`), else the last box of the text; it must be 0, 0.5 or 1. Text that is not whole
    (`llm.whole`: over the size limit, or cut off inside `<think>`) has no score, whether it
    comes from a run or an import.
    """
    if problem := not_whole(text):
        return VerifierScore(None, False, problem)
    body = strip_think(text)
    phrases = list(FINAL_SCORE_PHRASE.finditer(body))
    boxes = boxed_spans(body)
    after_phrase = [box for box in boxes if phrases and box[0] >= phrases[-1].end()]
    chosen = after_phrase[0] if after_phrase else (boxes[-1] if boxes else None)
    if chosen is None:
        return VerifierScore(None, False, "no \\boxed{} score in the text")
    number = score_number(chosen[2])
    if number is None or number not in VERIFIER_SCORES:
        return VerifierScore(
            None, False, f"the boxed score {chosen[2].strip()!r} is not 0, 0.5 or 1"
        )
    score = Decimal("0.5") if number == Decimal("0.5") else Decimal(int(number))
    kept = bool(EVALUATION_OPENING.search(body)) and bool(after_phrase)
    problem = "" if kept else _contract_problem(body, bool(after_phrase))
    return VerifierScore(score, kept, problem)


def _contract_problem(body: str, boxed_after_phrase: bool) -> str:
    if not EVALUATION_OPENING.search(body):
        return 'the text does not open with "Here is my evaluation of the solution:"'
    if not boxed_after_phrase:
        return 'no \\boxed{} score follows "the final overall score should be"'
    return ""
