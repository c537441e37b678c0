"""Model text counts only when whole: the one test that every entry point applies before it
reads a score, a label or a scheme out of model text, whether the text comes from a run
(`llm.client.Completion.incomplete`) or an import (`llm.scores.boxed_verdict`, the rule of the
verifier's and the meta-verifier's contracts; `llm.parsers.score_tag`, that of `<score>` and
`<points>`).

Text is not whole when it is larger than the reply size limit (setting `LLM_MAX_REPLY_BYTES`,
default 200 kB: a model that runs on for a megabyte has lost the thread, and such a reply
became a "valid" analysis or scheme before), or when it opens a `<think>` block that it never
closes (it stopped while reasoning: a box in there is a guess, not a verdict). Each contract's
own closing parts (the final box, `</score>`, `</assessment>`...) are checked by that contract's
reader.
"""

import re

from django.conf import settings

DEFAULT_MAX_REPLY_BYTES = 200_000
THINK_CLOSE = re.compile(r"</think\s*>", re.IGNORECASE)
THINK_OPEN = re.compile(r"<think\s*>", re.IGNORECASE)


def unclosed_think(text: str) -> bool:
    """The reply opens a `<think>` block that no `</think>` closes (it stopped while reasoning)."""
    opened = [m.start() for m in THINK_OPEN.finditer(text or "")]
    closed = [m.start() for m in THINK_CLOSE.finditer(text or "")]
    return bool(opened) and (not closed or opened[-1] > closed[-1])


def max_reply_bytes() -> int:
    """The reply size limit: settings.LLM_MAX_REPLY_BYTES (read at each call, so a changed
    setting applies at once), or the default where settings are not configured (llm/ stands
    below the apps and its readers run without them, as in benchmarks)."""
    if not settings.configured:
        return DEFAULT_MAX_REPLY_BYTES
    return int(getattr(settings, "LLM_MAX_REPLY_BYTES", DEFAULT_MAX_REPLY_BYTES))


def not_whole(text: str) -> str:
    """Why `text` is not a whole answer, in words ("" when it is)."""
    text = text or ""
    limit = max_reply_bytes()
    if len(text) > limit // 4 and (size := len(text.encode("utf-8"))) > limit:
        return f"the reply is {size:,} bytes, over the limit of {limit:,} (LLM_MAX_REPLY_BYTES)"
    if unclosed_think(text):
        return "the reply's reasoning block (<think>) is never closed"
    return ""
