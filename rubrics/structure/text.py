"""Small text helpers shared by the Markdown parsers: lines with their indentation and bullet
marker, point values, tags and partial-credit phrases."""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal

from .model import Partial

NUMBER = r"(\d+(?:\.\d+)?|½)"
POINT_WORD = r"(?:pts?|points?)"

BULLET = re.compile(r"^(?:[-*+•]|\d+[.)]|\(\d+\)|\([a-z]\)|[a-z]\))\s+(.*)$")
HEADING = re.compile(r"^#{1,6}\s+(.*)$")

# "(2 pts)", "[1pt]", "(2 pts, all or nothing)", "(3 points; half-point partial credit)"
POINTS_BRACKETED = re.compile(
    rf"[(\[]\s*{NUMBER}\s*{POINT_WORD}\.?\s*(?:[,;]\s*([^)\]]{{0,60}}))?[)\]]", re.I
)
POINTS_BOLD = re.compile(rf"\*\*\s*{NUMBER}\s*{POINT_WORD}\.?:?\s*\*\*:?", re.I)
POINTS_LEADING = re.compile(rf"^{NUMBER}\s*{POINT_WORD}\b\.?\s*[:.\-–—]?\s*", re.I)
POINTS_TRAILING = re.compile(rf"[-–—:,]\s*{NUMBER}\$?\s*{POINT_WORD}\.?\s*$", re.I)
POINTS_ANYWHERE = re.compile(rf"{NUMBER}\s*{POINT_WORD}\b", re.I)

TAG_ADDITIVE = re.compile(r"(?:\*\*)?\\?\[\s*additive\s*\\?\](?:\*\*)?", re.I)
TAG_MAX = re.compile(rf"(?:\*\*)?\\?\[\s*max\s*{NUMBER}\s*(?:{POINT_WORD})?\s*\\?\](?:\*\*)?", re.I)
LARGER_ONLY = re.compile(
    r"[(\[]?\s*[\"“”]?\s*award(?:s|ing)?\s+(?:only\s+)?the\s+larger(?:\s+only)?\s*[\"“”]?"
    r"\s*[)\]]?\.?|[(\[]\s*larger\s+only\s*[)\]]",
    re.I,
)
PARTIAL_NONE = re.compile(r"all[- ]or[- ]nothing|no partial credit", re.I)
PARTIAL_HALF = re.compile(
    r"half[- ]points?|0\.5[- ]point|(?:steps|increments|decrements) of 0\.5"
    r"|0\.5 (?:steps|increments)",
    re.I,
)
TAG_PARTIAL = re.compile(
    r"\\?\[\s*(?:all or nothing|no partial credit|half-point partial credit)\s*\\?\]"
    r"|\(\s*(?:partial credit )?(?:in )?(?:steps|increments) of 0\.5\s*\)"
    r"|\(\s*(?:all or nothing|no partial credit)\s*\)",
    re.I,
)
APPROACHABILITY = re.compile(
    r"\[\s*(?:overall\s+)?approachability(?:\s+score)?(?:\s*\(1-5\))?\s*:?\s*(\d)\s*\]", re.I
)
ROUND_DOWN = re.compile(r"\bround(?:ed|ing)?\s+down\b", re.I)
# the text says that nested items add up (otherwise nested partial items are alternatives)
ADDS_UP = re.compile(
    r"\badd(?:s|ed)?\s+up\b|\[\s*additive\s*\]|\b(?:these|they|items|parts|points)\s+(?:are\s+)?"
    r"additive\b|\bcumulative(?:ly)?\b|\bare\s+summed\b"
    r"|\bsum\s+of\s+(?:the\s+)?(?:nested|sub-?)?(?:items|parts|steps)\b",
    re.I,
)
# a list entry that says there is nothing to list
NOTHING = re.compile(
    r"^[(\[]?\s*(?:none|n/?a|nothing)(?:\s+(?:listed|identified|specified|applies|apply))?"
    r"\s*[)\]]?\.?$",
    re.I,
)


@dataclass
class Line:
    number: int  # 1-based
    indent: int  # columns (a tab counts 4)
    bullet: bool
    text: str  # without the bullet marker, stripped
    raw: str


def lines_of(text: str) -> list[Line]:
    found = []
    for number, raw in enumerate(text.replace("\r\n", "\n").split("\n"), start=1):
        expanded = raw.replace("\t", "    ")
        stripped = expanded.strip()
        if not stripped or stripped.startswith("```"):
            continue
        indent = len(expanded) - len(expanded.lstrip())
        match = BULLET.match(stripped)
        if match:
            found.append(Line(number, indent, True, match.group(1).strip(), raw))
        else:
            found.append(Line(number, indent, False, stripped, raw))
    return found


def plain(text: str) -> str:
    """The text without heading marks, emphasis around it and a trailing colon."""
    text = text.strip()
    heading = HEADING.match(text)
    if heading:
        text = heading.group(1)
    text = text.replace("**", "").replace("__", "").strip()
    text = re.sub(r"^\d+[.)]\s+", "", text)
    return text.rstrip(":").strip()


def points_value(value: str) -> Decimal:
    """A points figure of a scheme's text as a Decimal ("½" is one half)."""
    return Decimal("0.5") if value == "½" else Decimal(value)


def tidy(text: str) -> str:
    """Collapses spaces, drops empty emphasis and dangling separators left by removals."""
    text = re.sub(r"\*\*[\s:;,.\-–—]*\*\*|__[\s:;,.\-–—]*__", " ", text)
    text = re.sub(r"\s+", " ", text).strip()
    text = re.sub(r"\s+([.,;:])(?=[\s*]|$)", r"\1", text)
    text = re.sub(r"\(\s*\)|\[\s*\]", "", text).strip()
    text = re.sub(r"^[\s:;,.\-–—]+", "", text)
    text = re.sub(r"[\s:;,\-–—]+$", "", text)
    return text.strip()


def split_top_level(text: str, separator: str = ";") -> list[str]:
    """Splits on `separator` outside brackets and $...$ math."""
    parts, depth, in_math, current = [], 0, False, []
    for char in text:
        if char == "$":
            in_math = not in_math
        elif char in "([{" and not in_math:
            depth += 1
        elif char in ")]}" and not in_math and depth:
            depth -= 1
        if char == separator and depth == 0 and not in_math:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return [part.strip() for part in parts if part.strip()]


@dataclass
class ItemText:
    """What one checkpoint line says."""

    points: Decimal | None
    cap: Decimal | None  # [max k]
    larger: bool  # "award the larger only"
    partial: Partial | None
    title: str
    description: str
    points_certain: bool = True  # False when found only inside running text
    approachability: int | None = None
    adds_up: bool = False  # "[additive]", or words saying that nested items add up


def read_item(text: str) -> ItemText:
    """Points, tags and title/description of one checkpoint line."""
    text = text.replace("\\[", "[").replace("\\]", "]")
    partial = None
    if PARTIAL_HALF.search(text):
        partial = Partial.HALF
    elif PARTIAL_NONE.search(text):
        partial = Partial.NONE
    text = TAG_PARTIAL.sub(" ", text)
    approachability = None
    match = APPROACHABILITY.search(text)
    if match:
        approachability = int(match.group(1))
        text = text[: match.start()] + " " + text[match.end() :]
    adds_up = bool(ADDS_UP.search(text))
    larger = bool(LARGER_ONLY.search(text))
    text = LARGER_ONLY.sub(" ", text)
    cap = None
    match = TAG_MAX.search(text)
    if match:
        cap = points_value(match.group(1))
        text = text[: match.start()] + " " + text[match.end() :]
    text = TAG_ADDITIVE.sub(" ", text).strip()

    points, certain = None, True
    for pattern in (POINTS_BRACKETED, POINTS_BOLD, POINTS_LEADING, POINTS_TRAILING):
        match = pattern.search(text)
        if match:
            points = points_value(match.group(1))
            text = text[: match.start()] + " " + text[match.end() :]
            break
    else:
        match = POINTS_ANYWHERE.search(text)
        if match:
            points, certain = points_value(match.group(1)), False
    title, description = split_title(tidy(text))
    return ItemText(
        points, cap, larger, partial, title, description, certain, approachability, adds_up
    )


def without_zero_points(text: str) -> str:
    """The text without a '(0 pts)' (or '**0 pts**', '0 pts:', '— 0 pts') marker."""
    for pattern in (POINTS_BRACKETED, POINTS_BOLD, POINTS_LEADING, POINTS_TRAILING):
        match = pattern.search(text)
        if match and points_value(match.group(1)) == 0:
            text = text[: match.start()] + " " + text[match.end() :]
    return tidy(text)


ABBREVIATIONS = re.compile(
    r"(?:\b(?:e\.g|i\.e|cf|resp|vs|etc|viz|approx|Thm|Lem|Prop|Cor|Eq|Fig|St|Mr|Dr|No)|\b[A-Z])$"
)


def split_title(text: str) -> tuple[str, str]:
    """'**Title** — rest', '**Title**: rest' or '**Title:** rest' -> (Title, rest) (a bold
    phrase followed by more words is not a title); 'Title. What to show.' ->
    (Title, What to show.) when the first sentence is short; otherwise (text, '')."""
    match = re.match(r"^\*\*(.+?)\*\*(?=\s*(?:[—–:.\-]|$))\s*(.*)$", text, re.S)
    match = match or re.match(r"^\*\*(.+?[:.])\*\*\s*(.*)$", text, re.S)
    if match:
        title = match.group(1).strip().rstrip(":").strip()
        return title, tidy(match.group(2))
    end = first_sentence_end(text)
    if end is not None:
        return text[:end].strip(), text[end + 1 :].strip()
    return text, ""


def first_sentence_end(text: str, limit: int = 100) -> int | None:
    """The index of the full stop ending a short first sentence that more text follows, outside
    $...$ math and brackets and not after an abbreviation; None when there is none."""
    depth, in_math = 0, False
    for index, char in enumerate(text[: limit + 1]):
        if char == "$":
            in_math = not in_math
        elif char in "([{" and not in_math:
            depth += 1
        elif char in ")]}" and not in_math and depth:
            depth -= 1
        elif (
            char == "."
            and not in_math
            and depth == 0
            and text[index + 1 : index + 2] == " "
            and text[index + 2 :].strip()
            and not ABBREVIATIONS.search(text[:index])
            and index > 0
        ):
            return index
    return None
