"""Error spans and steps as offsets into a proof's SOURCE text (pure Python).

How a selection in the rendered proof becomes source offsets (static/js/grading.js): the page
aligns the rendered proof to its source once, walking the rendered text nodes and typeset math
in document order and finding each one's text (for math, its TeX, captured before KaTeX
replaces it) in the source with a forward-moving search. A selection's two ends are then read
through that alignment (a point inside typeset math snaps to the whole formula, delimiters
included). The stored span is (start, end, quote = source[start:end]), so it survives any change
of renderer: highlighting runs the same alignment the other way.

The server trusts nothing: `locate_span` checks that the quote is the source text at the
offsets, and re-anchors a quote whose offsets drifted to its occurrence nearest to the given
start; a quote found nowhere is refused with a message.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


class SpanError(ValueError):
    """A span that cannot be placed in the proof's text."""


def locate_span(text: str, start: int, end: int, quote: str) -> tuple[int, int, str]:
    """(start, end, quote) anchored in `text`: unchanged when the quote sits at the offsets, else
    moved to the quote's occurrence nearest `start`. An empty quote takes the text at the
    offsets."""
    if not quote:
        if not 0 <= start < end <= len(text):
            raise SpanError(f"offsets {start}-{end} lie outside the proof (length {len(text)})")
        return start, end, text[start:end]
    if 0 <= start <= len(text) and text[start : start + len(quote)] == quote:
        return start, start + len(quote), quote
    found = [m.start() for m in re.finditer(re.escape(quote), text)]
    if not found:
        shown = quote if len(quote) <= 40 else quote[:40] + "..."
        raise SpanError(f"the quoted text {shown!r} does not occur in the proof")
    best = min(found, key=lambda pos: abs(pos - start))
    return best, best + len(quote), quote


@dataclass(frozen=True)
class Step:
    """A paragraph of the proof: its number (from 1) and its offsets in the source."""

    number: int
    start: int
    end: int
    text: str


_BLANK = re.compile(r"\n[ \t]*\n")
_FENCE = re.compile(r"^(```|~~~)", re.MULTILINE)


def split_steps(text: str) -> list[Step]:
    """The proof's paragraphs (blocks between blank lines), keeping a code fence or a display
    math block that contains blank lines in one step."""
    steps: list[Step] = []
    pos = 0
    block_start = None
    for piece_end, next_start in [
        *((m.start(), m.end()) for m in _BLANK.finditer(text)),
        (len(text), len(text)),
    ]:
        if block_start is None:
            block_start = pos
        chunk = text[block_start:piece_end]
        pos = next_start
        if _open_block(chunk) and piece_end < len(text):
            continue
        stripped = chunk.strip()
        if stripped:
            lead = len(chunk) - len(chunk.lstrip())
            start = block_start + lead
            steps.append(Step(len(steps) + 1, start, start + len(stripped), stripped))
        block_start = None
    return steps


def _open_block(chunk: str) -> bool:
    """True when the chunk opens a fence or a $$ display that it does not close."""
    if len(_FENCE.findall(chunk)) % 2 == 1:
        return True
    return chunk.count("$$") % 2 == 1
