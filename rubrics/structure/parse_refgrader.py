"""RefGrader rubric documents (appendix D: plain, approachability, milestones, hybrid) -> Scheme.

A rubric distributes 7 whole points over main steps ("Key Strategic Insight 2 ... (2 points)",
"Milestone 1 (3 points): ..."), allows half-point partial credit within a step, defines
benchmark scores and what earns 0 points. Each main step becomes a leaf checkpoint of one chain
(partial credit in steps of 0.5, its sub-steps and partial-credit notes as its description,
its approachability score when given); the "0 points" items become zero-credit items;
benchmark and other sections are kept as notes. Milestone and hybrid rubrics (or any rubric
that says so) round the final score down to an integer.

A rubric written in ProofBench's three sections (the form our RefGrader prompts ask for) is
read by the ProofBench parser, then given RefGrader's rules (half points, rounding down).

One rubric per reference-solution cluster: `parse_refgrader_clusters` joins them as the
parallel chains of one scheme (`Scheme.from_chains`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .model import Chain, Checkpoint, Partial, Scheme, ZeroCreditItem, format_points
from .parse_proofbench import parse_proofbench
from .text import POINTS_LEADING, ROUND_DOWN, Line, lines_of, plain, read_item, tidy
from .validate import Message, error, validate, warning

DESIGNS = ("plain", "approachability", "milestones", "hybrid")
ROUNDING_DESIGNS = {"milestones", "hybrid"}

ZERO_SECTION = re.compile(
    r"^(?:defin\w*\s+(?:of\s+)?(?:the\s+)?)?(?:[\"“]?0[\"”]?|zero)[- ]points?\b|^zero[- ]credit"
    r"|^no credit",
    re.I,
)
NOTE_SECTION = re.compile(
    r"^(?:defin\w*\s+(?:of\s+)?)?(?:benchmark|notes?\b|common partial|alternative|partial credit"
    r"|deductions?\b|general|grading notes|scoring notes)",
    re.I,
)
CHECKPOINTS_HEADING = re.compile(r"^checkpoints\b", re.I)
STEP = re.compile(r"^(?:key strategic insight|main step|insight|step|milestone|part)\b", re.I)


def parse_refgrader(text: str, design: str = "plain") -> tuple[Scheme | None, list[Message]]:
    """One rubric document -> a scheme with one chain. design: plain, approachability,
    milestones or hybrid."""
    if design not in DESIGNS:
        return None, [
            error(f"Unknown RefGrader rubric design {design!r}: use {', '.join(DESIGNS)}.")
        ]
    lines = lines_of(text or "")
    if not lines:
        return None, [error("The rubric is empty.")]
    if any(CHECKPOINTS_HEADING.match(plain(line.raw)) for line in lines if line.indent == 0):
        return _as_proofbench(text, design)
    messages: list[Message] = []
    steps: list[Checkpoint] = []
    zero: list[ZeroCreditItem] = []
    notes: list[str] = []
    section = "steps"
    current: Checkpoint | None = None
    round_down = design in ROUNDING_DESIGNS
    for line in lines:
        if ROUND_DOWN.search(line.text):
            round_down = True
        kind = _section_of(line)
        if kind:
            section, current = kind, None
            continue
        if section == "zero":
            if line.bullet or not zero:
                zero.append(ZeroCreditItem(id="", text=tidy(line.text), line=line.number))
            else:
                zero[-1].text = f"{zero[-1].text} {tidy(line.text)}"
            continue
        if section == "notes":
            notes.append(line.raw.rstrip())
            continue
        step = _step_of(line)
        if step is not None:
            steps.append(step)
            current = step
        elif current is not None and (line.indent > 0 or line.bullet and _is_sub(line)):
            current.description = tidy(f"{current.description} {line.text}")
        elif _is_heading(line):
            current = None
        else:
            notes.append(line.raw.strip())
    if not steps:
        return None, [error("No main step with a point value was found in the rubric.")]
    scheme = Scheme(
        chains=[Chain(id="A", items=steps)],
        zero_credit=zero,
        round_down=round_down,
        notes="\n".join(notes),
    ).assign_ids()
    total = scheme.chains[0].max_value()
    if total != 7:
        messages.append(
            warning(
                f"The main steps add up to {format_points(total)} points; a RefGrader rubric "
                "distributes 7."
            )
        )
    return scheme, [*messages, *validate(scheme)]


def parse_refgrader_clusters(
    texts: Sequence[str], design: str = "plain", titles: Sequence[str] | None = None
) -> tuple[Scheme | None, list[Message]]:
    """One rubric per reference-solution cluster -> one scheme with a chain per cluster.
    Messages of each rubric are prefixed with its number (1 for the first text); a rubric that
    cannot be read is left out, with its error."""
    rubrics, kept_titles, messages = [], [], []
    for index, text in enumerate(texts):
        rubric, found = parse_refgrader(text, design)
        for message in found:
            # a readable rubric's errors come back from validating the joined scheme
            if rubric is None or not message.is_error:
                messages.append(
                    Message(message.level, f"Rubric {index + 1}: {message.text}", "", message.line)
                )
        if rubric is not None:
            rubrics.append(rubric)
            kept_titles.append(titles[index] if titles and index < len(titles) else "")
    if not rubrics:
        return None, messages or [error("No rubric was given.")]
    scheme = Scheme.from_chains(rubrics, titles=kept_titles)
    return scheme, [*messages, *validate(scheme)]


def _as_proofbench(text: str, design: str) -> tuple[Scheme | None, list[Message]]:
    """A rubric written in ProofBench's sections (as our RefGrader prompts ask): parsed as such,
    with RefGrader's rules on top: half-point partial credit within a step, and rounding down
    for the milestone designs."""
    scheme, messages = parse_proofbench(text)
    if scheme is None:
        return None, messages
    for leaf in scheme.leaves():
        if leaf.partial is Partial.INTEGER:
            leaf.partial = Partial.HALF
    scheme.round_down = scheme.round_down or design in ROUNDING_DESIGNS
    return scheme, messages


def _section_of(line: Line) -> str | None:
    if not _is_heading(line):
        return None
    text = plain(line.text)
    if ZERO_SECTION.match(text):
        return "zero"
    if NOTE_SECTION.match(text):
        return "notes"
    if _step_of(line) is None:
        return "steps"
    return None


def _is_heading(line: Line) -> bool:
    raw = line.raw.strip()
    if raw.startswith("#"):
        return True
    return not line.bullet and raw.startswith("**") and raw.rstrip(":").endswith("**")


def _is_sub(line: Line) -> bool:
    return line.indent > 0 or not STEP.match(plain(line.text))


def _step_of(line: Line) -> Checkpoint | None:
    if line.indent > 0:
        return None
    text = plain(line.text)
    if POINTS_LEADING.match(text) or re.search(r"\brubric\b", text, re.I):
        return None  # "6 or 6.5 points: ..." benchmark lines, "Rubric (7 points)" titles
    info = read_item(line.text)
    if info.points is None or not info.points_certain:
        return None
    if line.bullet and not STEP.match(text) and not text.startswith("**"):
        return None
    return Checkpoint(
        id="",
        title=info.title,
        points=info.points,
        description=info.description,
        partial=Partial.NONE if info.partial is Partial.NONE else Partial.HALF,
        approachability=info.approachability,
        line=line.number,
    )
