"""Checks a scheme and says what is wrong in words a person can act on.

Errors make a scheme unusable for grading (it stays a draft); warnings point at something
odd that may be intended. Each message names where: a checkpoint, chain or deduction id,
and the line of the source text when the scheme was parsed from text.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum

from .model import (
    MAX_SCORE,
    Chain,
    Checkpoint,
    DeductionKind,
    Rule,
    Scheme,
    format_points,
)


class Level(StrEnum):
    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True)
class Message:
    level: Level
    text: str
    where: str = ""  # a checkpoint, chain or deduction id
    line: int | None = None  # 1-based line of the source text

    @property
    def is_error(self) -> bool:
        return self.level is Level.ERROR

    def to_dict(self) -> dict:
        return {
            "level": self.level.value,
            "text": self.text,
            "where": self.where,
            "line": self.line,
        }

    @classmethod
    def from_dict(cls, data: dict) -> Message:
        return cls(
            level=Level(data["level"]),
            text=data["text"],
            where=data.get("where", ""),
            line=data.get("line"),
        )

    def __str__(self) -> str:
        place = []
        if self.line is not None:
            place.append(f"line {self.line}")
        if self.where:
            place.append(self.where)
        prefix = f"{', '.join(place)}: " if place else ""
        return f"{self.level.value}: {prefix}{self.text}"


def error(text: str, where: str = "", line: int | None = None) -> Message:
    return Message(Level.ERROR, text, where, line)


def warning(text: str, where: str = "", line: int | None = None) -> Message:
    return Message(Level.WARNING, text, where, line)


def has_errors(messages: list[Message]) -> bool:
    return any(message.is_error for message in messages)


def validate(scheme: Scheme) -> list[Message]:
    """Every problem found, errors first in scheme order, then warnings."""
    messages: list[Message] = []
    if scheme.is_empty:
        return [error("The scheme has no checkpoints: there is nothing to award.")]
    if scheme.bands:
        return sorted(_check_bands(scheme), key=lambda m: m.level is not Level.ERROR)
    messages.extend(_check_ids(scheme))
    for chain in scheme.all_chains():
        messages.extend(_check_chain(chain, is_shared=chain is scheme.shared))
    messages.extend(_check_totals(scheme))
    messages.extend(_check_deductions(scheme))
    return sorted(messages, key=lambda m: m.level is not Level.ERROR)


def _check_ids(scheme: Scheme) -> list[Message]:
    ids = [cp.id for cp in scheme.all_checkpoints()]
    ids += [item.id for item in scheme.zero_credit] + [d.id for d in scheme.deductions]
    messages = []
    for key, count in Counter(ids).items():
        if not key:
            messages.append(error(f"{count} item(s) have no id; grades could not refer to them."))
        elif count > 1:
            messages.append(
                error(f"The id {key} is used {count} times; each item needs its own id.", key)
            )
    return messages


def _check_chain(chain: Chain, *, is_shared: bool) -> list[Message]:
    name = "The shared prerequisites" if is_shared else f"Chain {chain.id}"
    messages = []
    if not chain.items:
        messages.append(warning(f"{name} has no checkpoints.", chain.id, chain.line))
    if chain.rule is Rule.MAX:
        messages.extend(_check_cap(name, chain.cap, _plain_sum(chain.items), chain.id, chain.line))
    for item in chain.items:
        for cp in item.walk():
            messages.extend(_check_checkpoint(cp))
    return messages


def _plain_sum(items: list[Checkpoint]) -> Decimal:
    return sum((item.max_value() for item in items), Decimal(0))


def _check_cap(
    name: str, cap: Decimal | None, plain: Decimal, where: str, line: int | None
) -> list[Message]:
    if cap is None:
        return [error(f"{name} says [max k] but gives no k.", where, line)]
    if cap <= 0:
        return [error(f"{name} has [max {format_points(cap)}]: k must be positive.", where, line)]
    if cap > plain:
        return [
            warning(
                f"{name} has [max {format_points(cap)}] but its items only add up to "
                f"{format_points(plain)}, so the cap never matters.",
                where,
                line,
            )
        ]
    return []


def _check_checkpoint(cp: Checkpoint) -> list[Message]:
    label = f"Checkpoint {cp.id} ({cp.title or 'untitled'})"
    messages = []
    if cp.points < 0:
        messages.append(
            error(f"{label} is worth {format_points(cp.points)} points.", cp.id, cp.line)
        )
    elif cp.points != cp.points.to_integral_value():
        messages.append(
            error(
                f"{label} is worth {format_points(cp.points)} points: a checkpoint is worth whole "
                "points (half points are only for partial credit within a step).",
                cp.id,
                cp.line,
            )
        )
    elif cp.points == 0 and not cp.children:
        messages.append(
            warning(
                f"{label} is worth 0 points; list it under zero-credit items instead.",
                cp.id,
                cp.line,
            )
        )
    if cp.approachability is not None and not 1 <= cp.approachability <= 5:
        messages.append(
            warning(f"{label} has approachability {cp.approachability}; the scale is 1-5.", cp.id)
        )
    if not cp.children:
        if cp.rule is not Rule.ADDITIVE:
            messages.append(
                warning(
                    f"{label} says '{_rule_words(cp.rule)}' but has no nested items to choose "
                    "between.",
                    cp.id,
                    cp.line,
                )
            )
        return messages
    if cp.rule is Rule.LARGER and len(cp.children) < 2:
        messages.append(
            warning(
                f"{label} says 'award the larger only' but has a single nested item.",
                cp.id,
                cp.line,
            )
        )
    if cp.rule is Rule.MAX:
        messages.extend(_check_cap(label, cp.cap, _plain_sum(cp.children), cp.id, cp.line))
    reachable = cp.reachable()
    if reachable != cp.points:
        messages.append(
            warning(
                f"{label} is stated as {format_points(cp.points)} points but its nested items "
                f"give at most {format_points(reachable)}.",
                cp.id,
                cp.line,
            )
        )
    return messages


def _rule_words(rule: Rule) -> str:
    return {Rule.MAX: "[max k]", Rule.LARGER: "award the larger only"}.get(rule, "additive")


def _check_totals(scheme: Scheme) -> list[Message]:
    messages = []
    totals = scheme.chain_totals()
    shared_note = " with the shared prerequisites" if scheme.shared else ""
    for chain in scheme.chains:
        total = totals[chain.id]
        if total > MAX_SCORE:
            messages.append(
                error(
                    f"Chain {chain.id}{shared_note} can total {format_points(total)} points, "
                    f"more than {format_points(MAX_SCORE)}.",
                    chain.id,
                    chain.line,
                )
            )
    if not scheme.chains and scheme.shared:
        totals = {"shared": scheme.shared.max_value()}
    if totals and MAX_SCORE not in totals.values():
        best = ", ".join(f"{key}: {format_points(value)}" for key, value in totals.items())
        messages.append(
            error(
                f"No chain reaches exactly {format_points(MAX_SCORE)}/7, so no proof could get "
                f"full marks (the most each chain can give{shared_note}: {best}).",
            )
        )
    return messages


def _check_deductions(scheme: Scheme) -> list[Message]:
    messages = []
    for deduction in scheme.deductions:
        value = format_points(deduction.value)
        if deduction.kind is DeductionKind.CAP:
            if not Decimal(0) <= deduction.value <= MAX_SCORE:
                messages.append(
                    error(
                        f"Deduction {deduction.id} caps the score at {value}/7: a cap must lie "
                        "between 0 and 7.",
                        deduction.id,
                        deduction.line,
                    )
                )
            elif deduction.value == MAX_SCORE:
                messages.append(
                    warning(
                        f"Deduction {deduction.id} caps the score at 7/7, which changes nothing.",
                        deduction.id,
                        deduction.line,
                    )
                )
        elif deduction.value <= 0:
            messages.append(
                error(
                    f"Deduction {deduction.id} takes off {value} points: a deduction must be a "
                    "positive number of points.",
                    deduction.id,
                    deduction.line,
                )
            )
        elif deduction.value > MAX_SCORE:
            messages.append(
                error(
                    f"Deduction {deduction.id} takes off {value} points, more than the whole "
                    "scale of 7.",
                    deduction.id,
                    deduction.line,
                )
            )
        if not deduction.text.strip():
            messages.append(
                warning(
                    f"Deduction {deduction.id} does not say when it applies.",
                    deduction.id,
                    deduction.line,
                )
            )
    return messages


def _check_bands(scheme: Scheme) -> list[Message]:
    """A band scheme: distinct ids, points within 0-7, one band for a complete proof (7)."""
    messages = []
    for key, count in Counter(band.id for band in scheme.bands).items():
        if not key or count > 1:
            messages.append(error(f"The band id {key!r} is used {count} times.", key))
    for band in scheme.bands:
        if not Decimal(0) <= band.points <= MAX_SCORE:
            messages.append(
                error(
                    f"The {band.name} band gives {format_points(band.points)} points: a band "
                    "gives 0 to 7.",
                    band.id,
                    band.line,
                )
            )
    if all(band.points != MAX_SCORE for band in scheme.bands):
        messages.append(error("No band gives 7, so no proof could get full marks."))
    if scheme.chains or scheme.shared or scheme.deductions:
        messages.append(
            error("A band scheme has bands only: no chains, checkpoints or deductions besides.")
        )
    return messages
