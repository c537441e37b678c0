"""ProofBench `marking_scheme` Markdown (the three-section output of the A.7 generation prompt,
and the compact form of the paper's A.5 example) -> Scheme.

Read, leniently:
- sections "Checkpoints", "Zero-credit items", "Deductions", "Notes" (headings, bold lines or
  numbered items; content may follow the heading after a colon, items separated by ';');
- in Checkpoints: "Chain A (idea: ...)" headers ("Approach 2", "Path B" too) start parallel
  chains, "Shared prerequisites" starts the shared group; bullets carry points as "(2 pts)",
  "[1pt]", "**2 pts**", "2 pts:" or "... — 2 pts", tags [additive] / [max k], "award the
  larger only", "all or nothing", "(partial credit in steps of 0.5)"; nested bullets with
  points make groups, nested bullets without points ("Partial: 1.5 pts if ...") are the
  parent's description; a step whose nested items are worth less than it keeps its full points
  as the first alternative; "Total (max 7)" and "Score exactly one chain ..." lines are the
  format's boilerplate; "rounded down" sets `round_down`;
- in Deductions: "Cap at 5/7" / "[cap 6/7]" caps, "-1", "[-2]", "−2 pts", "deduct 1 point"
  penalties; lines stating the at-most-one or best-proof rules are boilerplate.
Anything else is kept in `Scheme.notes`, with a warning naming the line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from decimal import Decimal

from .model import (
    Chain,
    Checkpoint,
    Deduction,
    DeductionKind,
    Partial,
    Rule,
    Scheme,
    ZeroCreditItem,
    format_points,
)
from .text import (
    LARGER_ONLY,
    NOTHING,
    NUMBER,
    POINTS_BRACKETED,
    ROUND_DOWN,
    TAG_ADDITIVE,
    TAG_MAX,
    Line,
    lines_of,
    plain,
    points_value,
    read_item,
    split_top_level,
    tidy,
    without_zero_points,
)
from .validate import Message, error, validate, warning

SECTION = re.compile(
    r"^(?:marking scheme\b[^:]*?[.:]\s*)?"
    r"(check[- ]?points?|(?:zero|no)[- ]credit(?:\s+items?)?|deductions?(?:\s+and\s+caps)?"
    r"|notes|guidelines)"
    r"\b(.*)$",
    re.I,
)
CHAIN = re.compile(r"^(?:chain|approach|path|method)\s+([A-Z0-9]{1,2})\b(.*)$", re.I)
SHARED = re.compile(r"^shared\s+prerequisites?\b(.*)$", re.I)
BOILERPLATE = re.compile(
    r"score exactly one chain|maximum subtotal|do not add points across|"
    r"count(?:ed|s)? at most once|^total\b|single largest|at most one\b|"
    r"never reduce|below (?:0|zero)|best one only|no stacking|never stacks|^none\.?$",
    re.I,
)
CAP = re.compile(
    rf"\bcap(?:ped)?\s*(?:(?:at|to)\s*)?{NUMBER}\s*(?:/\s*7|pts?|points?)?"
    rf"|\b(?:max(?:imum)?(?:\s+score)?(?:\s+of)?|at most)\s*{NUMBER}\s*/\s*7",
    re.I,
)
MINUS = re.compile(
    rf"(?:^|(?<=[\s(\[*:]))[-−–—]\s*{NUMBER}\s*(?:pts?|points?)?(?!\s*/)|"
    rf"\bdeduct(?:ion of)?\s*{NUMBER}\s*(?:pts?|points?)?",
    re.I,
)
PARTIAL_NOTE = re.compile(r"^\W*partial(?: credit)?\W*:", re.I)
TRAILING_POINTS = re.compile(POINTS_BRACKETED.pattern + r"\s*$", re.I)
LEADING_CONDITION = re.compile(r"^(?:if|for|when)\s+", re.I)


@dataclass
class _Node:
    """A bullet of the checkpoints section, with its continuation lines and nested bullets."""

    number: int
    text: str
    raw: str
    children: list[_Node] = field(default_factory=list)


@dataclass
class _Container:
    kind: str  # "chain" | "shared"
    title: str
    line: int | None
    rule: Rule = Rule.ADDITIVE
    cap: Decimal | None = None
    nodes: list[_Node] = field(default_factory=list)
    implicit: bool = False


def parse_proofbench(text: str) -> tuple[Scheme | None, list[Message]]:
    """The scheme and the messages (parse warnings, then validation); None when no checkpoint
    with points was found."""
    parser = _Parser(text)
    return parser.run()


class _Parser:
    def __init__(self, text: str):
        self.lines = lines_of(text or "")
        self.messages: list[Message] = []
        self.containers: list[_Container] = []
        self.zero: list[tuple[int, str]] = []
        self.deductions: list[tuple[int, str]] = []
        self.notes: list[str] = []
        self.guidelines: list[str] = []
        self.round_down = False
        self.stack: list[tuple[int, _Node]] = []
        self.last_item: list | None = None  # [line, text] of the last zero/deduction item
        self.previous_number = 0

    def run(self) -> tuple[Scheme | None, list[Message]]:
        if not self.lines:
            return None, [error("The marking scheme is empty.")]
        has_header = any(self._section_of(line) for line in self.lines)
        section = "preamble" if has_header else "checkpoints"
        for line in self.lines:
            found = self._section_of(line)
            if found:
                section, inline = found
                self.stack, self.last_item = [], None
                for part in split_top_level(inline) if section in {"zero", "deductions"} else []:
                    self._add_listed(section, line.number, part)
                if section == "checkpoints" and inline and ROUND_DOWN.search(inline):
                    self.round_down = True
            elif section == "checkpoints":
                self._checkpoint_line(line)
            elif section in {"zero", "deductions"}:
                self._listed_line(section, line)
            elif section == "notes":
                self.notes.append(line.raw.rstrip())
            elif section == "guidelines":
                self.guidelines.append(line.raw.rstrip())
            elif ROUND_DOWN.search(line.text):
                self.round_down = True
            self.previous_number = line.number
        return self._finish()

    # --- sections ------------------------------------------------------------------------

    def _section_of(self, line: Line) -> tuple[str, str] | None:
        if line.indent > 0 and line.bullet:
            return None
        if line.bullet and not re.match(r"^\s*(?:\d+[.)]|#)", line.raw.strip()):
            return None
        match = SECTION.match(plain(line.raw if line.bullet else line.text))
        if not match:
            return None
        word = match.group(1).lower()
        rest = match.group(2).strip()
        rest = re.sub(r"^\([^)]*\)", "", rest).strip()
        inline = rest[1:].strip() if rest.startswith(":") else ""
        if rest and not rest.startswith(":") and not rest.startswith("("):
            return None  # a sentence that happens to begin with the word
        if word.startswith("check"):
            return "checkpoints", inline
        if word.startswith("zero") or re.match(r"no[- ]credit", word):
            return "zero", inline
        if word.startswith("deduction"):
            return "deductions", inline
        return word, inline

    # --- checkpoints ---------------------------------------------------------------------

    def _checkpoint_line(self, line: Line) -> None:
        header = plain(line.text)
        chain = CHAIN.match(header)
        shared = SHARED.match(header)
        if chain:
            self._open(line, "chain", chain.group(2))
            return
        if shared:
            self._open(line, "shared", shared.group(1))
            return
        if ROUND_DOWN.search(line.text) and read_item(line.text).points is None:
            self.round_down = True
            return
        if BOILERPLATE.search(header) and read_item(line.text).points is None:
            return
        if line.bullet:
            self._bullet(line)
            return
        if self.stack and self._continues(line):
            node = self.stack[-1][1]
            node.text = f"{node.text} {line.text}"
            return
        self._note(line, "not a checkpoint (no bullet)")

    def _continues(self, line: Line) -> bool:
        return line.number == self.previous_number + 1

    def _open(self, line: Line, kind: str, rest: str) -> None:
        rest = rest.replace("\\[", "[").replace("\\]", "]")
        cap = None
        match = TAG_MAX.search(rest)
        if match:
            cap = points_value(match.group(1))
            rest = rest[: match.start()] + rest[match.end() :]
        rest = TAG_ADDITIVE.sub(" ", rest)
        rest = re.sub(
            r"[—–-]?\s*\(?count at most once regardless of chain\.?\)?", " ", rest, flags=re.I
        )
        rest = TRAILING_POINTS.sub("", rest.strip())  # "Chain A: induction (7 pts)"
        container = _Container(
            kind=kind,
            title=tidy(rest),
            line=line.number,
            rule=Rule.MAX if cap is not None else Rule.ADDITIVE,
            cap=cap,
        )
        self.containers.append(container)
        self.stack = []

    def _bullet(self, line: Line) -> None:
        if not self.containers:
            self.containers.append(_Container("chain", "", None, implicit=True))
        container = self.containers[-1]
        node = _Node(line.number, line.text, line.raw.strip())
        while self.stack and self.stack[-1][0] >= line.indent:
            self.stack.pop()
        if self.stack:
            self.stack[-1][1].children.append(node)
        else:
            container.nodes.append(node)
        self.stack.append((line.indent, node))

    def _build(self, node: _Node) -> Checkpoint | None:
        info = read_item(node.text)
        scored = [child for child in node.children if _scored(child)]
        extra = [_flatten(child) for child in node.children if not _scored(child)]
        extra = [tidy(LARGER_ONLY.sub(" ", part)) for part in extra]
        description = " ".join(part for part in [info.description, *extra] if part)
        if scored:
            children = [self._build(child) for child in scored]
            # "award the larger only" on the group, or on one of its leaf items (a nested
            # group's own phrase is about that group's items)
            larger = info.larger or any(
                read_item(c.text).larger for c in node.children if not c.children
            )
            rule = Rule.LARGER if larger else Rule.MAX if info.cap is not None else Rule.ADDITIVE
            cp = Checkpoint(
                id="",
                title=info.title,
                points=Decimal(0),
                description=description,
                rule=rule,
                cap=info.cap if rule is Rule.MAX else None,
                children=children,
                approachability=info.approachability,
                line=node.number,
            )
            if info.points is not None:
                cp.points = info.points
            elif info.cap is not None:
                cp.points = info.cap
            else:
                cp.points = cp.reachable()
            said_to_add_up = info.adds_up or any(
                read_item(part.text).adds_up for part in node.children
            )
            if (
                cp.rule is Rule.ADDITIVE
                and info.points is not None
                and len(children) > 1
                and cp.reachable() == cp.points
                and not said_to_add_up
            ):
                # "(3 pts) Step" over "(1 pt) ..." and "(2 pts) ...": partial credits for the
                # step, not parts of it, unless the text says they add up
                cp.rule = Rule.LARGER
                self.messages.append(
                    warning(
                        f"The nested items of '{cp.title[:60]}' add up to its "
                        f"{format_points(cp.points)} points; read as partial credits (the full "
                        "points, or the larger nested one). Write [additive] on the step if "
                        "they add up.",
                        line=cp.line,
                    )
                )
            if cp.reachable() < cp.points and cp.rule is not Rule.MAX:
                self._add_full_credit(cp)
            return cp
        points = info.points if info.points is not None else info.cap
        if points is None:
            return None
        if not info.points_certain:
            self.messages.append(
                warning(
                    f"Read {format_points(points)} points from the running text of "
                    f"'{info.title[:60]}'; "
                    "check the value.",
                    line=node.number,
                )
            )
        return Checkpoint(
            id="",
            title=info.title,
            points=points,
            description=description,
            partial=info.partial or Partial.INTEGER,
            approachability=info.approachability,
            line=node.number,
        )

    def _add_full_credit(self, cp: Checkpoint) -> None:
        """'(3 pts) Step' with nested '(1 pt) partial ...' items: the nested items are partial
        credit for the step, so the step itself is the first alternative."""
        if cp.rule is Rule.ADDITIVE:
            self.messages.append(
                warning(
                    f"'{cp.title[:60]}' is worth {format_points(cp.points)} points but its nested "
                    "items add up to less; read as: the full points, or the larger of the nested "
                    "partial credits.",
                    line=cp.line,
                )
            )
        cp.rule = Rule.LARGER
        cp.children.insert(
            0,
            Checkpoint(
                id="",
                title="Full credit for this step",
                points=cp.points,
                partial=Partial.INTEGER,
                line=cp.line,
            ),
        )

    # --- zero-credit items and deductions ------------------------------------------------

    def _listed_line(self, section: str, line: Line) -> None:
        if line.bullet and line.indent == 0 or line.bullet and self.last_item is None:
            self._add_listed(section, line.number, line.text)
        elif self.last_item is not None and (line.bullet or self._continues(line)):
            self.last_item[1] = f"{self.last_item[1]} {line.text}"
        elif section == "deductions" and (CAP.search(line.text) or MINUS.search(line.text)):
            self._add_listed(section, line.number, line.text)
        elif not BOILERPLATE.search(line.text):
            self._note(line, "neither a bullet nor a continuation of one")

    def _add_listed(self, section: str, number_: int, text: str) -> None:
        item = [number_, text]
        (self.zero if section == "zero" else self.deductions).append(item)
        self.last_item = item

    def _deduction(self, number_: int, text: str) -> Deduction | None:
        source = text.replace("\\[", "[").replace("\\]", "]")
        cap, minus = CAP.search(source), MINUS.search(source)
        if cap and (not minus or cap.start() <= minus.start()):
            kind, match, value = DeductionKind.CAP, cap, cap.group(1) or cap.group(2)
        elif minus:
            kind, match, value = DeductionKind.MINUS, minus, minus.group(1) or minus.group(2)
        else:
            if not BOILERPLATE.search(source):
                self.notes.append(text)
                self.messages.append(
                    warning(
                        "No penalty ('-1') or cap ('cap at 5/7') found in this deduction; "
                        "kept as a note.",
                        line=number_,
                    )
                )
            return None
        rest = tidy(source[: match.start()] + " " + source[match.end() :])
        rest = tidy(LEADING_CONDITION.sub("", rest))
        return Deduction(id="", text=rest, kind=kind, value=points_value(value), line=number_)

    # --- result --------------------------------------------------------------------------

    def _note(self, line: Line, why: str) -> None:
        self.notes.append(line.raw.strip())
        self.messages.append(warning(f"Kept as a note: {why}.", line=line.number))

    def _finish(self) -> tuple[Scheme | None, list[Message]]:
        scheme = Scheme(round_down=self.round_down)
        explicit = [c for c in self.containers if not c.implicit]
        for container in self.containers:
            items = []
            for node in container.nodes:
                cp = self._build(node)
                if cp is None:
                    self.notes.append(node.raw)
                    self.messages.append(
                        warning(
                            "No point value found; kept as a note, not a checkpoint.",
                            line=node.number,
                        )
                    )
                else:
                    items.append(cp)
            chain = Chain(
                id="",
                title=container.title,
                items=items,
                rule=container.rule,
                cap=container.cap,
                line=container.line,
            )
            if container.kind == "shared":
                if scheme.shared is None:
                    scheme.shared = chain
                else:
                    scheme.shared.items.extend(items)
            elif container.implicit and explicit and not items:
                continue
            else:
                if container.implicit and explicit:
                    self.messages.append(
                        warning(
                            "Checkpoints appear before the first chain; they are read as a "
                            "chain of their own.",
                            line=items[0].line,
                        )
                    )
                scheme.chains.append(chain)
        if scheme.shared and not scheme.chains:
            self.messages.append(
                warning(
                    "Only shared prerequisites were found, no chain; they are read as the chain.",
                    line=scheme.shared.line,
                )
            )
            scheme.chains, scheme.shared = [scheme.shared], None
        zero = [(n, without_zero_points(text)) for n, text in self.zero]
        scheme.zero_credit = [
            ZeroCreditItem(id="", text=text, line=n)
            for n, text in zero
            if text and not NOTHING.match(plain(text))
        ]
        for n, text in self.deductions:
            deduction = self._deduction(n, text)
            if deduction is not None:
                scheme.deductions.append(deduction)
        scheme.notes = "\n".join(self.notes)
        scheme.guidelines = "\n".join(self.guidelines)
        scheme.assign_ids()
        if scheme.is_empty:
            return None, [
                *self._sorted_messages(),
                error("No checkpoint with a point value was found in the marking scheme."),
            ]
        return scheme, [*self._sorted_messages(), *validate(scheme)]

    def _sorted_messages(self) -> list[Message]:
        return sorted(self.messages, key=lambda m: (m.line is None, m.line or 0))


def _scored(node: _Node) -> bool:
    """A nested bullet is a checkpoint of its own when it states points as a checkpoint does
    ('(1 pt) ...'), not in running text ('Partial: 1.5 pts for ...' is guidance)."""
    if PARTIAL_NOTE.match(node.text):
        return False
    info = read_item(node.text)
    certain = info.points is not None and info.points_certain
    return certain or info.cap is not None or any(map(_scored, node.children))


def _flatten(node: _Node) -> str:
    return " ".join([node.text, *(_flatten(child) for child in node.children)])
