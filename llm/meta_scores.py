"""The rating of a meta-verifier's output (DeepSeekMath-V2, appendix A.3's output contract).

The meta-analysis opens with 'Here is my analysis of the "solution evaluation":' and ends with
'Based on my analysis, I will rate the "solution evaluation" as:' followed by `\\boxed{0}`,
`\\boxed{0.5}` or `\\boxed{1}`. It is read by the verifier's rule (`llm.scores.boxed_verdict`):
exactly one closed box of the scale after the last key phrase, else no rating.
"""

import re

from llm.scores import BoxedContract, VerifierScore, boxed_verdict

META_OPENING = re.compile(
    r"here is my analysis of the\s*[\"'“”]?solution evaluation[\"'“”]?\s*:?", re.IGNORECASE
)
META_RATING_PHRASE = re.compile(
    r"i\s+will\s+rate\s+the\s*[\"'“”]?solution evaluation[\"'“”]?\s+as\s*:?", re.IGNORECASE
)
META_VERIFIER_CONTRACT = BoxedContract(
    opening=META_OPENING,
    opening_words='Here is my analysis of the "solution evaluation":',
    final=META_RATING_PHRASE,
    final_words='I will rate the "solution evaluation" as:',
    noun="rating",
)


def meta_verifier_score(text: str) -> VerifierScore:
    """The 0 / 0.5 / 1 rating of a meta-analysis, or why it has none."""
    return boxed_verdict(text, META_VERIFIER_CONTRACT)
