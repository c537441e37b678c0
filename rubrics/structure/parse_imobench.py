"""IMO-ProofBench grading guidelines -> a band scheme.

The guidelines list numbered lines under "(Incorrect)", "(Partial)", "(Almost)" (and maybe
"(Correct)") headers: which grade band a proof reaches, without points per line. They become
the four bands of IMO-Bench's own grader (its ProofAutoGrader prompt): Correct 7, Almost 6,
Partial 1, Incorrect 0, each with the general rubric's description and the problem's lines as
its guide. The problem's guidelines take precedence for partial credit: a line that states its
own points ("(2 pts)") makes a band of its own with those points ("partial-2"). Lines before
any header are kept as the scheme's notes, with a warning.
"""

from __future__ import annotations

import re
from decimal import Decimal

from .model import Band, Scheme, format_points
from .text import POINTS_BOLD, POINTS_BRACKETED, POINTS_TRAILING, read_item, tidy
from .validate import Message, error, validate, warning

CATEGORY = re.compile(r"^\(\s*(incorrect|partial|almost|correct)\s*\)\s*:?\s*(.*)$", re.I)
NUMBERED = re.compile(r"^(?:\d+[.)]|[-*•])\s+(.*)$")

# IMO-Bench's ProofAutoGrader: the band, its points, and what the general rubric says of it
# (in our words).
BANDS = (
    (
        "correct",
        "Correct",
        Decimal(7),
        "Complete, correct and fully rigorous. Abandoned attempts before a complete correct "
        "proof do not lower the score.",
    ),
    (
        "almost",
        "Almost",
        Decimal(6),
        "A sound core argument with only minor calculation errors or small gaps. Missing "
        "proofs of major parts, unjustified claims or sketchy arguments do not qualify.",
    ),
    (
        "partial",
        "Partial",
        Decimal(1),
        "Substantial progress of a kind the problem's guidelines name. First observations, "
        "restating the problem, or partial results the guidelines do not mention do not "
        "qualify.",
    ),
    (
        "incorrect",
        "Incorrect",
        Decimal(0),
        "No substantial progress on a key step of a full solution, or a fundamentally flawed "
        "argument: partial progress without key results or without rigour.",
    ),
)


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
    if not set(categories) - {""}:
        return None, [
            error(
                "No (Incorrect), (Partial), (Almost) or (Correct) header was found: these are not "
                "IMO-ProofBench grading guidelines. The text is kept as free guidelines."
            )
        ]
    messages: list[Message] = []
    notes = [line for _, line in categories.get("", [])]
    if notes:
        messages.append(
            warning(
                "These lines come before any (Partial)/(Almost)/(Incorrect) header; they are "
                "kept as notes.",
                line=categories[""][0][0],
            )
        )
    bands: list[Band] = []
    for key, name, default, description in BANDS:
        by_points: dict[Decimal, list[tuple[int, str]]] = {default: []}
        for number, line in categories.get(key, []):
            points, words = _line_points(line)
            by_points.setdefault(default if points is None else points, []).append((number, words))
        for points, lines in sorted(by_points.items(), key=lambda entry: -entry[0]):
            bands.append(
                Band(
                    id=key if points == default else f"{key}-{format_points(points)}",
                    name=name,
                    points=points,
                    description=description,
                    lines=[words for _, words in lines],
                    line=lines[0][0] if lines else None,
                )
            )
    scheme = Scheme(bands=bands, notes="\n".join(notes), guidelines=text.strip())
    return scheme, [*messages, *validate(scheme)]


def _line_points(line: str) -> tuple[Decimal | None, str]:
    """The points a guideline line states ("(2 pts)"), if any, and its words without them."""
    if not any(p.search(line) for p in (POINTS_BRACKETED, POINTS_BOLD, POINTS_TRAILING)):
        return None, tidy(line)
    info = read_item(line)
    words = " ".join(part for part in (info.title, info.description) if part)
    return info.points, words
