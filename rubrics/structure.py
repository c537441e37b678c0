"""Parsed marking-scheme structure and its score function.

INTERFACE STUB (owned by the structure work of issue 3): the signatures below are the contract
the rest of the code relies on; the implementation is replaced in full.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal


@dataclass
class Checkpoint:
    id: str
    title: str
    points: Decimal
    description: str = ""


@dataclass
class Scheme:
    checkpoints: list[Checkpoint] = field(default_factory=list)

    @classmethod
    def from_dict(cls, data: Mapping) -> Scheme:
        return cls(
            checkpoints=[
                Checkpoint(id=c["id"], title=c["title"], points=Decimal(str(c["points"])))
                for c in data.get("checkpoints", [])
            ]
        )

    def to_dict(self) -> dict:
        return {
            "checkpoints": [
                {"id": c.id, "title": c.title, "points": str(c.points)} for c in self.checkpoints
            ]
        }

    def all_checkpoints(self) -> list[Checkpoint]:
        return list(self.checkpoints)


def compute_score(
    scheme: Scheme, awards: Mapping[str, Decimal], deductions: Iterable[str] = ()
) -> Decimal:
    total = sum((Decimal(str(v)) for v in awards.values()), Decimal(0))
    return max(Decimal(0), min(Decimal(7), total))
