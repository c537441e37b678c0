"""Error spans of several experts over one text, as segments (pure Python).

Cutting the text at every span boundary gives segments that each lie wholly inside or outside
every span; a segment carries the layers (e.g. "a", "b") whose spans cover it and their notes.
Concatenating the segments gives the text back, so offsets stay those of Proof.text.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Mark:
    start: int
    end: int
    title: str


@dataclass
class Segment:
    text: str
    layers: list[str] = field(default_factory=list)
    titles: list[str] = field(default_factory=list)

    @property
    def css(self) -> str:
        return " ".join(f"layer-{layer}" for layer in self.layers)

    @property
    def title(self) -> str:
        return "\n".join(self.titles)


def overlay(text: str, layers: Mapping[str, Iterable[Mark]]) -> list[Segment]:
    marks = [
        (layer, mark)
        for layer, found in layers.items()
        for mark in found
        if 0 <= mark.start < mark.end <= len(text)
    ]
    cuts = sorted({0, len(text), *(m.start for _, m in marks), *(m.end for _, m in marks)})
    segments = []
    for start, end in zip(cuts, cuts[1:], strict=False):
        covering = [(layer, m) for layer, m in marks if m.start <= start and end <= m.end]
        segments.append(
            Segment(
                text=text[start:end],
                layers=sorted({layer for layer, _ in covering}),
                titles=[f"{layer.upper()}: {m.title}" for layer, m in covering],
            )
        )
    return segments
