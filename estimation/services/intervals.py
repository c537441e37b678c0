"""Each generator's mean score in a campaign with honest 95% intervals (the estimators:
adjudication.estimators):

- experts only: the mean of the expert labels (final labels not made by a machine) with a
  percentile bootstrap interval over the labelled items;
- prediction-powered (PPI++): the few expert labels correct the mean of the automatic score of
  every item (the mean of its automatic raters' values, each on 0-1 put linearly onto the
  campaign scale: estimation.services.confidence.automatic_unit_values), so many automatic grades
  narrow the interval without their bias leaking in. It needs items with both an expert label
  and an automatic score, and items with an automatic score only.
Each comes with the number of expert labels an interval of `width` would need (same spread).
Means are on the campaign scale.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from adjudication.estimators import (
    Interval,
    bootstrap_mean_interval,
    labels_needed,
    ppi_mean_interval,
)
from adjudication.models import LabelSource
from annotation.models import Campaign, Item
from annotation.scales import scale_spec
from estimation.services.confidence import automatic_unit_values

CONFIDENCE = 0.95


class IntervalError(ValueError):
    """A width that cannot be used; the message names the field."""


@dataclass(frozen=True)
class GeneratorScore:
    generator: str
    items: int
    expert_labels: int
    automatic_only: int
    paired: int
    human: Interval | None
    ppi: Interval | None
    human_needed: int | None
    ppi_needed: int | None

    def as_dict(self) -> dict:
        return {
            "generator": self.generator,
            "items": self.items,
            "expert_labels": self.expert_labels,
            "automatic_only": self.automatic_only,
            "paired": self.paired,
            "human": None if self.human is None else self.human.as_dict(),
            "ppi": None if self.ppi is None else self.ppi.as_dict(),
            "human_labels_needed": self.human_needed,
            "ppi_labels_needed": self.ppi_needed,
        }


def parse_width(raw: object, scale: str) -> float:
    """The interval width asked for (on the campaign scale); empty: a tenth of the scale's
    range."""
    spec = scale_spec(scale)
    span = float(spec.max - spec.min)
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return span / 10
    try:
        value = Decimal(str(raw).strip())
    except InvalidOperation:
        raise IntervalError(f"width: {raw!r} is not a number") from None
    if not value.is_finite() or value <= 0 or value > Decimal(str(span)):
        raise IntervalError(f"width: a number above 0 and at most {span:g} (the scale's range)")
    return float(value)


def campaign_score_intervals(*, campaign: Campaign, width: float) -> list[GeneratorScore]:
    """One row per generator of the campaign's items (five queries)."""
    spec = scale_spec(campaign.scale)
    low, high = float(spec.min), float(spec.max)
    items = list(
        Item.objects.filter(campaign=campaign).values_list(
            "id", "proof_id", "proof__generator", "final_label__value", "final_label__source"
        )
    )
    automatic = automatic_unit_values(campaign, sorted({proof for _, proof, _, _, _ in items}))
    groups: dict[str, list[tuple[float | None, float | None]]] = defaultdict(list)
    for _, proof_id, generator, value, source in items:
        expert = None if value is None or source == LabelSource.AUTOMATIC else float(value)
        judged = automatic.get(proof_id)
        machine = (
            None if not judged else low + (high - low) * sum(v for _, v in judged) / len(judged)
        )
        groups[generator].append((expert, machine))
    rows = []
    for generator in sorted(groups):
        pairs = groups[generator]
        gold = [e for e, _ in pairs if e is not None]
        paired = [(e, m) for e, m in pairs if e is not None and m is not None]
        unlabelled = [m for e, m in pairs if e is None and m is not None]
        human = bootstrap_mean_interval(gold, confidence=CONFIDENCE)
        ppi = (
            ppi_mean_interval(
                [e for e, _ in paired], [m for _, m in paired], unlabelled, confidence=CONFIDENCE
            )
            if paired
            else None
        )
        rows.append(
            GeneratorScore(
                generator=generator,
                items=len(pairs),
                expert_labels=len(gold),
                automatic_only=len(unlabelled),
                paired=len(paired),
                human=human,
                ppi=ppi,
                human_needed=None if human is None else labels_needed(human, width),
                ppi_needed=None if ppi is None else labels_needed(ppi, width),
            )
        )
    return rows
