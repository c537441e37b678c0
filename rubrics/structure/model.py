"""The parsed marking scheme: chains of checkpoints, shared prerequisites, zero-credit items,
deductions and caps. Plain dataclasses; `to_dict` / `from_dict` give the JSON kept in
`MarkingScheme.structure`.

Ids are stable strings the grading page stores awards against:
- checkpoints of a scheme with one chain: "c1", "c2", nested "c1.1", "c1.2";
- checkpoints of a scheme with several chains: "A1", "A2", "B1", nested "A3.1";
- shared prerequisites: "s1", "s2", nested "s1.1";
- zero-credit items: "z1", "z2"; deductions and caps: "d1", "d2";
- grade bands of a band scheme: "correct", "almost", "partial", "incorrect" (a band split by
  the points its guideline lines state: "partial-2").
A scheme is of one of two kinds: checkpoints (chains of checkpoints, the scores add up) or
bands (IMO-ProofBench's guidelines: the grader picks the one band that fits, which is the score).
Parsers assign them with `Scheme.assign_ids()`; `from_dict` keeps the ids it is given.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from enum import StrEnum

MAX_SCORE = Decimal(7)


def to_decimal(value: object) -> Decimal:
    """A Decimal from an int, str, float or Decimal (floats through their shortest repr)."""
    if isinstance(value, Decimal):
        return value
    if isinstance(value, bool):
        raise ValueError(f"not a number of points: {value!r}")
    try:
        return Decimal(str(value).strip())
    except ArithmeticError as exc:
        raise ValueError(f"not a number of points: {value!r}") from exc


def format_points(value: Decimal) -> str:
    """'2' for 2, '1.5' for 1.5: no trailing zeros, never exponent notation."""
    value = value.normalize()
    text = format(value, "f")
    return text


class Rule(StrEnum):
    """How a group combines the values of its children."""

    ADDITIVE = "additive"  # the sum of the children
    MAX = "max"  # the sum of the children, at most `cap` ([max k])
    LARGER = "larger"  # "award the larger only": the largest single child


class Partial(StrEnum):
    """Which awards a leaf checkpoint accepts between 0 and its points."""

    NONE = "none"  # all or nothing: 0 or the full points
    INTEGER = "integer"  # any whole number of points
    HALF = "half"  # steps of 0.5 (RefGrader: partial credit within a main step)


class DeductionKind(StrEnum):
    MINUS = "minus"  # subtract `value` points
    CAP = "cap"  # the score is at most `value` ("cap at 5/7")


@dataclass
class Checkpoint:
    """A scoring item. A leaf is awarded by the grader; a group (with children) is computed
    from its children by `rule` and never exceeds its own `points`."""

    id: str
    title: str
    points: Decimal
    description: str = ""
    rule: Rule = Rule.ADDITIVE
    cap: Decimal | None = None
    partial: Partial = Partial.INTEGER
    children: list[Checkpoint] = field(default_factory=list)
    approachability: int | None = None
    line: int | None = field(default=None, compare=False)

    @property
    def is_group(self) -> bool:
        return bool(self.children)

    def walk(self) -> Iterator[Checkpoint]:
        """This checkpoint, then its descendants, depth first in order."""
        yield self
        for child in self.children:
            yield from child.walk()

    def max_value(self) -> Decimal:
        """The most this item can be worth: a leaf its points, a group what its children reach
        under its rule, at most its own stated points."""
        if not self.children:
            return self.points
        return min(self.reachable(), self.points)

    def reachable(self) -> Decimal:
        """What a group's children can reach under its rule, ignoring the group's own points."""
        values = [child.max_value() for child in self.children]
        if not values:
            return self.points
        if self.rule is Rule.LARGER:
            return max(values)
        total = sum(values, Decimal(0))
        if self.rule is Rule.MAX and self.cap is not None:
            total = min(total, self.cap)
        return total

    def award_levels(self) -> list[Decimal]:
        """The awards a grader may give this leaf, from 0 to its points."""
        if self.partial is Partial.NONE or self.points <= 0:
            return sorted({Decimal(0), self.points})
        step = Decimal("0.5") if self.partial is Partial.HALF else Decimal(1)
        levels = []
        level = Decimal(0)
        while level < self.points:
            levels.append(level)
            level += step
        levels.append(self.points)
        # 1 rather than 1.0 (0.5 + 0.5), wherever a level is shown
        return [
            value.quantize(Decimal(1)) if value == value.to_integral() else value
            for value in levels
        ]

    def to_dict(self) -> dict:
        data: dict = {
            "id": self.id,
            "title": self.title,
            "points": format_points(self.points),
            "description": self.description,
            "rule": self.rule.value,
            "partial": self.partial.value,
        }
        if self.cap is not None:
            data["cap"] = format_points(self.cap)
        if self.children:
            data["children"] = [child.to_dict() for child in self.children]
        if self.approachability is not None:
            data["approachability"] = self.approachability
        return data

    @classmethod
    def from_dict(cls, data: Mapping) -> Checkpoint:
        cap = data.get("cap")
        return cls(
            id=str(data["id"]),
            title=str(data.get("title", "")),
            points=to_decimal(data.get("points", 0)),
            description=str(data.get("description", "")),
            rule=Rule(data.get("rule", Rule.ADDITIVE)),
            cap=None if cap is None else to_decimal(cap),
            partial=Partial(data.get("partial", Partial.INTEGER)),
            children=[cls.from_dict(child) for child in data.get("children", [])],
            approachability=data.get("approachability"),
        )


@dataclass
class Chain:
    """One solution path (or the shared prerequisites): its items add up, or are capped by
    `cap` when `rule` is MAX."""

    id: str
    title: str = ""
    items: list[Checkpoint] = field(default_factory=list)
    rule: Rule = Rule.ADDITIVE
    cap: Decimal | None = None
    line: int | None = field(default=None, compare=False)

    def walk(self) -> Iterator[Checkpoint]:
        for item in self.items:
            yield from item.walk()

    def max_value(self) -> Decimal:
        total = sum((item.max_value() for item in self.items), Decimal(0))
        if self.rule is Rule.MAX and self.cap is not None:
            total = min(total, self.cap)
        return total

    def to_dict(self) -> dict:
        data: dict = {
            "id": self.id,
            "title": self.title,
            "rule": self.rule.value,
            "items": [item.to_dict() for item in self.items],
        }
        if self.cap is not None:
            data["cap"] = format_points(self.cap)
        return data

    @classmethod
    def from_dict(cls, data: Mapping) -> Chain:
        cap = data.get("cap")
        return cls(
            id=str(data.get("id", "")),
            title=str(data.get("title", "")),
            items=[Checkpoint.from_dict(item) for item in data.get("items", [])],
            rule=Rule(data.get("rule", Rule.ADDITIVE)),
            cap=None if cap is None else to_decimal(cap),
        )


@dataclass
class ZeroCreditItem:
    """An argument or observation that earns nothing (listed so graders recognise it)."""

    id: str
    text: str
    line: int | None = field(default=None, compare=False)

    def to_dict(self) -> dict:
        return {"id": self.id, "text": self.text}

    @classmethod
    def from_dict(cls, data: Mapping) -> ZeroCreditItem:
        return cls(id=str(data["id"]), text=str(data.get("text", "")))


@dataclass
class Deduction:
    """A flat penalty (MINUS `value` points) or a cap (the score is at most `value`).
    Only the one applied deduction that lowers the subtotal most counts."""

    id: str
    text: str
    kind: DeductionKind
    value: Decimal
    line: int | None = field(default=None, compare=False)

    def apply(self, subtotal: Decimal) -> Decimal:
        if self.kind is DeductionKind.CAP:
            return min(subtotal, self.value)
        return subtotal - self.value

    @property
    def label(self) -> str:
        if self.kind is DeductionKind.CAP:
            return f"cap at {format_points(self.value)}/7"
        return f"-{format_points(self.value)}"

    def to_dict(self) -> dict:
        return {
            "id": self.id,
            "text": self.text,
            "kind": self.kind.value,
            "value": format_points(self.value),
        }

    @classmethod
    def from_dict(cls, data: Mapping) -> Deduction:
        return cls(
            id=str(data["id"]),
            text=str(data.get("text", "")),
            kind=DeductionKind(data["kind"]),
            value=to_decimal(data["value"]),
        )


@dataclass
class Band:
    """A grade band of a band scheme: the grader picks the one band that fits the proof and its
    `points` are the score. `description` is the general rubric's words for the band, `lines`
    the problem's own guideline lines for it (the grader's guide)."""

    id: str
    name: str
    points: Decimal
    description: str = ""
    lines: list[str] = field(default_factory=list)
    line: int | None = field(default=None, compare=False)

    @property
    def title(self) -> str:
        return self.name

    def award_levels(self) -> list[Decimal]:
        """The one award a band takes: its points (picking it)."""
        return [self.points]

    def to_dict(self) -> dict:
        return {
            "id": self.id,
            "name": self.name,
            "points": format_points(self.points),
            "description": self.description,
            "lines": list(self.lines),
        }

    @classmethod
    def from_dict(cls, data: Mapping) -> Band:
        return cls(
            id=str(data["id"]),
            name=str(data.get("name", "")),
            points=to_decimal(data.get("points", 0)),
            description=str(data.get("description", "")),
            lines=[str(line) for line in data.get("lines", [])],
        )


class SchemeKind(StrEnum):
    CHECKPOINTS = "checkpoints"  # chains of checkpoints whose awards add up
    BANDS = "bands"  # grade bands: the grader picks one, its points are the score


@dataclass
class Scheme:
    """A marking scheme: score exactly one chain (the best), plus the shared prerequisites
    counted once, then at most one deduction or cap, clamped to 0-7. A band scheme has
    `bands` instead of chains: the picked band's points are the score."""

    chains: list[Chain] = field(default_factory=list)
    shared: Chain | None = None
    zero_credit: list[ZeroCreditItem] = field(default_factory=list)
    deductions: list[Deduction] = field(default_factory=list)
    round_down: bool = False
    notes: str = ""
    guidelines: str = ""
    bands: list[Band] = field(default_factory=list)

    # --- reading -------------------------------------------------------------------------

    def all_checkpoints(self) -> list[Checkpoint]:
        """Every checkpoint (groups and leaves): shared prerequisites first, then each chain."""
        found: list[Checkpoint] = []
        for chain in self.all_chains():
            found.extend(chain.walk())
        return found

    @property
    def kind(self) -> SchemeKind:
        return SchemeKind.BANDS if self.bands else SchemeKind.CHECKPOINTS

    def leaves(self) -> list[Checkpoint | Band]:
        """What a grader awards: the checkpoints without children, or a band scheme's bands
        (both have `id`, `title`, `points` and `award_levels()`)."""
        if self.bands:
            return list(self.bands)
        return [cp for cp in self.all_checkpoints() if not cp.children]

    def band(self, band_id: str) -> Band | None:
        return next((b for b in self.bands if b.id == band_id), None)

    def all_chains(self) -> list[Chain]:
        """The shared prerequisites (if any) followed by the chains."""
        return ([self.shared] if self.shared else []) + list(self.chains)

    def checkpoint(self, checkpoint_id: str) -> Checkpoint | None:
        for cp in self.all_checkpoints():
            if cp.id == checkpoint_id:
                return cp
        return None

    def deduction(self, deduction_id: str) -> Deduction | None:
        return next((d for d in self.deductions if d.id == deduction_id), None)

    def chain_totals(self) -> dict[str, Decimal]:
        """The most each chain can score together with the shared prerequisites."""
        shared = self.shared.max_value() if self.shared else Decimal(0)
        return {chain.id: chain.max_value() + shared for chain in self.chains}

    @property
    def is_empty(self) -> bool:
        return not self.bands and not any(chain.items for chain in self.all_chains())

    # --- building ------------------------------------------------------------------------

    def assign_ids(self) -> Scheme:
        """Gives every item its canonical id (see the module docstring); returns self."""
        if self.shared:
            self.shared.id = "shared"
            _number(self.shared.items, "s")
        several = len(self.chains) > 1
        for index, chain in enumerate(self.chains):
            letter = _chain_letter(index)
            chain.id = letter
            _number(chain.items, letter if several else "c")
        for index, item in enumerate(self.zero_credit, start=1):
            item.id = f"z{index}"
        for index, item in enumerate(self.deductions, start=1):
            item.id = f"d{index}"
        return self

    @classmethod
    def from_chains(
        cls,
        rubrics: Sequence[Scheme],
        *,
        titles: Sequence[str] | None = None,
    ) -> Scheme:
        """One scheme whose parallel chains are the given rubrics' chains (RefGrader: one rubric
        per reference-solution cluster). `titles[i]`, when given and not empty, names rubric i's
        chain. Zero-credit items and deductions are merged (same text once), distinct notes
        joined; the result rounds down if any rubric does. Ids are reassigned."""
        merged = cls()
        seen_zero: set[str] = set()
        seen_deductions: set[tuple[str, str, Decimal]] = set()
        notes: list[str] = []
        for index, rubric in enumerate(rubrics):
            for chain_index, chain in enumerate(rubric.chains):
                title = chain.title
                if chain_index == 0 and titles is not None and index < len(titles):
                    title = titles[index] or title
                merged.chains.append(
                    Chain(
                        id="",
                        title=title,
                        items=[Checkpoint.from_dict(i.to_dict()) for i in chain.items],
                        rule=chain.rule,
                        cap=chain.cap,
                    )
                )
            for item in rubric.zero_credit:
                if item.text not in seen_zero:
                    seen_zero.add(item.text)
                    merged.zero_credit.append(ZeroCreditItem(id="", text=item.text))
            for deduction in rubric.deductions:
                key = (deduction.text, deduction.kind.value, deduction.value)
                if key not in seen_deductions:
                    seen_deductions.add(key)
                    merged.deductions.append(
                        Deduction(
                            id="", text=deduction.text, kind=deduction.kind, value=deduction.value
                        )
                    )
            merged.round_down = merged.round_down or rubric.round_down
            if rubric.notes and rubric.notes not in notes:
                notes.append(rubric.notes)
        merged.notes = "\n".join(notes)
        return merged.assign_ids()

    # --- serialising ---------------------------------------------------------------------

    def to_dict(self) -> dict:
        data = {
            "version": 1,
            "chains": [chain.to_dict() for chain in self.chains],
            "shared": self.shared.to_dict() if self.shared else None,
            "zero_credit": [item.to_dict() for item in self.zero_credit],
            "deductions": [item.to_dict() for item in self.deductions],
            "round_down": self.round_down,
            "notes": self.notes,
            "guidelines": self.guidelines,
        }
        if self.bands:
            data["kind"] = self.kind.value
            data["bands"] = [band.to_dict() for band in self.bands]
        return data

    @classmethod
    def from_dict(cls, data: Mapping) -> Scheme:
        """Reads `to_dict` output. Also reads the first skeleton's {"checkpoints": [...]}
        as a scheme with one chain."""
        if not data:
            return cls()
        if "chains" not in data and "checkpoints" in data:
            items = [Checkpoint.from_dict(c) for c in data["checkpoints"]]
            return cls(chains=[Chain(id="A", items=items)])
        shared = data.get("shared")
        return cls(
            chains=[Chain.from_dict(chain) for chain in data.get("chains", [])],
            shared=Chain.from_dict(shared) if shared else None,
            zero_credit=[ZeroCreditItem.from_dict(z) for z in data.get("zero_credit", [])],
            deductions=[Deduction.from_dict(d) for d in data.get("deductions", [])],
            round_down=bool(data.get("round_down", False)),
            notes=str(data.get("notes", "")),
            guidelines=str(data.get("guidelines", "")),
            bands=[Band.from_dict(b) for b in data.get("bands", [])],
        )


def _chain_letter(index: int) -> str:
    letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    if index < len(letters):
        return letters[index]
    return letters[index // len(letters) - 1] + letters[index % len(letters)]


def _number(items: list[Checkpoint], prefix: str) -> None:
    for index, item in enumerate(items, start=1):
        item.id = f"{prefix}{index}"
        _number_children(item)


def _number_children(item: Checkpoint) -> None:
    for index, child in enumerate(item.children, start=1):
        child.id = f"{item.id}.{index}"
        _number_children(child)
