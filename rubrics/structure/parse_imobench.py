"""IMO-ProofBench grading guidelines -> Scheme, when they carry point values.

The guidelines list numbered lines under "(Incorrect)", "(Partial)", "(Almost)" (and maybe
"(Correct)") headers. They describe which grade band a proof reaches, mostly without points:
then there is nothing to add up, the parser returns None with a warning, and the caller keeps
the text as the scheme's free `guidelines`. When every (Partial)/(Almost)/(Correct) line states
its points ("(2 pts)"), the lines are alternative grade bands, not steps that add up: they
become one "award the larger only" group (c1, items c1.1, c1.2, ... all or nothing), with the
format's (Correct) band, a complete and correct proof for 7, added when the text has none; the
(Incorrect) lines become zero-credit items.
"""

from __future__ import annotations

import re

from .model import MAX_SCORE, Chain, Checkpoint, Partial, Rule, Scheme, ZeroCreditItem
from .text import POINTS_BOLD, POINTS_BRACKETED, POINTS_TRAILING, read_item, tidy
from .validate import Message, error, validate, warning

CATEGORY = re.compile(r"^\(\s*(incorrect|partial|almost|correct)\s*\)\s*:?\s*(.*)$", re.I)
NUMBERED = re.compile(r"^(?:\d+[.)]|[-*•])\s+(.*)$")


def guideline_categories(text: str) -> dict[str, list[tuple[int, str]]]:
    """{"incorrect"|"partial"|"almost"|"correct": [(line number, text), ...]} in order; lines
    before any category header are under ""."""
    found: dict[str, list[tuple[int, str]]] = {}
    current = ""
    last: list | None = None
    for number, raw in enumerate((text or "").replace("\r\n", "\n").split("\n"), start=1):
        line = raw.strip()
        if not line:
            continue
        header = CATEGORY.match(line)
        if header:
            current = header.group(1).lower()
            found.setdefault(current, [])
            last = None
            if header.group(2):
                found[current].append((number, header.group(2)))
            continue
        item = NUMBERED.match(line)
        if item or last is None:
            found.setdefault(current, []).append((number, item.group(1) if item else line))
            last = found[current][-1]
        else:
            found[current][-1] = (last[0], f"{last[1]} {line}")
            last = found[current][-1]
    return found


def parse_imobench(text: str) -> tuple[Scheme | None, list[Message]]:
    categories = guideline_categories(text)
    if not categories:
        return None, [error("The grading guidelines are empty.")]
    scored = [
        (category, number, line)
        for category in ("partial", "almost", "correct")
        for number, line in categories.get(category, [])
    ]
    with_points = [entry for entry in scored if _has_points(entry[2])]
    if not with_points:
        return None, [
            warning(
                "These grading guidelines give no points to their (Partial)/(Almost) lines, so "
                "they do not make checkpoints; the text is kept as free guidelines for graders."
            )
        ]
    if len(with_points) < len(scored):
        lines = ", ".join(str(n) for _, n, line in scored if not _has_points(line))
        return None, [
            warning(
                f"Only some guideline lines give points (none on line(s) {lines}); the text is "
                "kept as free guidelines for graders."
            )
        ]
    bands = []
    for index, (category, number, line) in enumerate(with_points, start=1):
        info = read_item(line)
        bands.append(
            Checkpoint(
                id=f"c1.{index}",
                title=info.title,
                points=info.points,
                description=info.description or f"({category.capitalize()})",
                partial=Partial.NONE,
                line=number,
            )
        )
    if not categories.get("correct"):
        bands.append(
            Checkpoint(
                id=f"c1.{len(bands) + 1}",
                title="A complete and correct proof",
                points=MAX_SCORE,
                description="(Correct)",
                partial=Partial.NONE,
            )
        )
    checkpoints = [
        Checkpoint(
            id="c1",
            title="Grade band reached",
            points=max(band.points for band in bands),
            rule=Rule.LARGER,
            children=bands,
        )
    ]
    scheme = Scheme(
        chains=[Chain(id="A", items=checkpoints)],
        zero_credit=[
            ZeroCreditItem(id=f"z{i}", text=tidy(line), line=number)
            for i, (number, line) in enumerate(categories.get("incorrect", []), start=1)
        ],
        guidelines=text.strip(),
    )
    return scheme, validate(scheme)


def _has_points(line: str) -> bool:
    return any(p.search(line) for p in (POINTS_BRACKETED, POINTS_BOLD, POINTS_TRAILING))
