"""The rating of a meta-verifier's output (DeepSeekMath-V2, appendix A.3's output contract).

The meta-analysis opens with 'Here is my analysis of the "solution evaluation":' and ends with
'Based on my analysis, I will rate the "solution evaluation" as:' followed by `\\boxed{0}`,
`\\boxed{0.5}` or `\\boxed{1}`. As for verifier output (llm.scores), the rating is the first box
after the last key phrase (after any `</think>`), else the last box of the text.
"""

import re

from llm.scores import VERIFIER_SCORES, VerifierScore, boxed_spans, score_number, strip_think
from llm.whole import not_whole

META_OPENING = re.compile(
    r"here is my analysis of the\s*[\"'“”]?solution evaluation[\"'“”]?\s*:?", re.IGNORECASE
)
META_RATING_PHRASE = re.compile(
    r"i\s+will\s+rate\s+the\s*[\"'“”]?solution evaluation[\"'“”]?\s+as", re.IGNORECASE
)


def meta_verifier_score(text: str) -> VerifierScore:
    """The 0 / 0.5 / 1 rating of a meta-analysis, whether it kept the contract, and why not.
    Text that is not whole (`llm.whole`) has no rating."""
    if problem := not_whole(text):
        return VerifierScore(None, False, problem)
    body = strip_think(text)
    phrases = list(META_RATING_PHRASE.finditer(body))
    boxes = boxed_spans(body)
    after_phrase = [box for box in boxes if phrases and box[0] >= phrases[-1].end()]
    chosen = after_phrase[0] if after_phrase else (boxes[-1] if boxes else None)
    if chosen is None:
        return VerifierScore(None, False, "no \\boxed{} rating in the text")
    number = score_number(chosen[2])
    if number is None or number not in VERIFIER_SCORES:
        return VerifierScore(
            None, False, f"the boxed rating {chosen[2].strip()!r} is not 0, 0.5 or 1"
        )
    score = VERIFIER_SCORES[[s == number for s in VERIFIER_SCORES].index(True)]
    if not META_OPENING.search(body):
        return VerifierScore(
            score,
            False,
            'the text does not open with "Here is my analysis of the solution evaluation:"',
        )
    if not after_phrase:
        return VerifierScore(
            score, False, 'no \\boxed{} rating follows "I will rate the solution evaluation as"'
        )
    return VerifierScore(score, True)
