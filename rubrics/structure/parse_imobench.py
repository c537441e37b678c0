"""IMO-ProofBench grading guidelines -> Scheme, when they carry point values.

The guidelines list numbered lines under "(Incorrect)", "(Partial)", "(Almost)" (and maybe
"(Correct)") headers. They describe which grade band a proof reaches, mostly without points:
then there is nothing to add up, the parser returns None with a warning, and the caller keeps
the text as the scheme's free `guidelines`. When every (Partial)/(Almost) line states its
points ("(2 pts)"), those lines become the checkpoints of one chain and the (Incorrect) lines
zero-credit items.
"""

from __future__ import annotations

import re

from .model import Chain, Checkpoint, Partial, Scheme, ZeroCreditItem
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
    checkpoints = []
    for index, (category, number, line) in enumerate(with_points, start=1):
        info = read_item(line)
        checkpoints.append(
            Checkpoint(
                id=f"c{index}",
                title=info.title,
                points=info.points,
                description=info.description or f"({category.capitalize()})",
                partial=info.partial or Partial.INTEGER,
                line=number,
            )
        )
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
