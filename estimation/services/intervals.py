"""Each generator's mean score in a campaign with 95% intervals that are valid by design (the
estimators: adjudication.estimators), or, where no interval can be made valid, the reason in
words:

- experts only: the inverse-probability-weighted (Hajek) mean of the expert labels (final
  labels not made by a machine), each weighted by 1 / its item's inclusion probability (the
  design recorded on the item: every item for experts, a uniform random share of a routing
  budget, routed by uncertainty), with a cluster-robust variance over problems (a problem's
  proofs share errors) and a t(problems - 1) interval;
- prediction-powered (active PPI, Zrnic & Candes 2024, power-tuned as PPI++): the mean over
  every item of its automatic score (the mean of its automatic raters' values, each on 0-1 put
  linearly onto the campaign scale: estimation.services.confidence.automatic_unit_values),
  corrected by the inverse-probability-weighted errors of the labelled items; unbiased
  whatever the graders' errors; clustered by problem as well. It needs an automatic score on
  some item.

Not shown as an interval (the row says why): a generator with items whose probability of
reaching experts is not known (routed to the most uncertain with no random share, or ranked
before designs were recorded), or too few problems with a label. Items chosen for experts but
not labelled yet (a campaign in progress) are taken as missing at random among the chosen:
the probability of each labelled item is scaled by the share of the chosen that are labelled,
and the interval's assumption line says so.
Each comes with the number of expert labels an interval of `width` would need (same spread).
Means are on the campaign scale; an interval reaching past an end of the scale (few labels near
0 or the top) is cut to the scale's range (`clipped`, and its assumption line says so), which
keeps its coverage since no mean lies outside.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from adjudication.estimators import (
    DesignInterval,
    active_ppi_mean_interval,
    clipped_to,
    ipw_mean_interval,
    labels_needed,
)
from adjudication.models import LabelSource
from annotation.models import Campaign, Item, ItemDesign
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
    human: DesignInterval | None
    ppi: DesignInterval | None
    human_needed: int | None
    ppi_needed: int | None
    human_assumes: str = ""  # one line: what the interval assumes
    ppi_assumes: str = ""
    human_why_not: str = ""  # why no interval is shown, in words
    ppi_why_not: str = ""
    designs: dict | None = None  # items by design

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
            "human_assumes": self.human_assumes,
            "ppi_assumes": self.ppi_assumes,
            "human_not_shown_because": self.human_why_not,
            "ppi_not_shown_because": self.ppi_why_not,
            "designs": dict(self.designs or {}),
        }


CHOSEN = {ItemDesign.ALL, ItemDesign.GOLD, ItemDesign.UNIFORM, ItemDesign.ROUTED}


@dataclass
class _Unit:
    cluster: int
    design: str
    probability: float | None
    expert: float | None
    machine: float | None


def _design_words(designs: dict) -> str:
    return ", ".join(f"{count} {name.replace('_', ' ')}" for name, count in sorted(designs.items()))


def _unknown_reason(unknown: int) -> str:
    return (
        f"{unknown} item(s) have no known probability of reaching experts (routed to the most "
        "uncertain with no random share, or ranked before designs were recorded): no interval "
        "over them can be valid. Give the routing a uniform share and rank again."
    )


def _clip_words(interval: DesignInterval, bounds: tuple[float, float]) -> str:
    if not interval.clipped:
        return ""
    return (
        f" Cut to the scale's range {bounds[0]:g}-{bounds[1]:g} (no mean lies outside it, so "
        "the cut keeps the coverage)."
    )


def _generator_row(
    generator: str, units: list[_Unit], width: float, bounds: tuple[float, float]
) -> GeneratorScore:
    designs: dict[str, int] = defaultdict(int)
    for unit in units:
        designs[unit.design] += 1
    labelled = [u for u in units if u.expert is not None]
    paired = [u for u in labelled if u.machine is not None]
    automatic_only = sum(1 for u in units if u.expert is None and u.machine is not None)
    unknown = sum(1 for u in units if u.probability is None or u.probability <= 0)
    chosen = [u for u in units if u.design in CHOSEN or u.expert is not None]
    waiting = len(chosen) - len(labelled)
    # chosen but not labelled yet: missing at random among the chosen (said beside the figure)
    share = len(labelled) / len(chosen) if chosen else 0.0
    clusters = len({u.cluster for u in labelled})
    human = ppi = None
    human_why = ppi_why = ""
    if unknown:
        human_why = ppi_why = _unknown_reason(unknown)
    elif clusters < 2:
        human_why = ppi_why = (
            f"needs expert labels on at least 2 problems (the problems are the independent "
            f"units); has {clusters}"
        )
    else:
        human = clipped_to(
            ipw_mean_interval(
                [u.expert for u in labelled],
                [u.probability * share for u in labelled],
                [u.cluster for u in labelled],
                confidence=CONFIDENCE,
            ),
            *bounds,
        )
        if not any(u.machine is not None for u in units):
            ppi_why = "no item has an automatic score"
        else:
            ppi = clipped_to(
                active_ppi_mean_interval(
                    [u.expert is not None for u in units],
                    [u.expert for u in units],
                    [u.machine for u in units],
                    [u.probability * (share if u.expert is not None else 1.0) for u in units],
                    [u.cluster for u in units],
                    confidence=CONFIDENCE,
                ),
                *bounds,
            )
    missing = (
        f"; assumes the {waiting} chosen item(s) not labelled yet are like the labelled ones"
        if waiting
        else ""
    )
    routed = designs.get(ItemDesign.ROUTED, 0) + designs.get(ItemDesign.UNIFORM, 0)
    weighting = (
        "each label weighted by 1 / its chance of being chosen (routing with a uniform share)"
        if routed
        else "every item was for experts (weights 1)"
    )
    human_assumes = ppi_assumes = ""
    if human is not None:
        human_assumes = (
            f"Assumes: the recorded design ({weighting}); proofs clustered by problem "
            f"({human.clusters} problems, taken as independent){missing}.{_clip_words(human, bounds)}"
        )
    if ppi is not None:
        ppi_assumes = (
            f"Assumes: the recorded design ({weighting}); the automatic scores of all "
            f"{len(units)} items corrected by the weighted errors of the labelled ones "
            f"(lambda {ppi.lam:.2f}), valid however wrong the graders are; proofs clustered "
            f"by problem ({ppi.clusters} problems, taken as independent){missing}."
            f"{_clip_words(ppi, bounds)}"
        )
    return GeneratorScore(
        generator=generator,
        items=len(units),
        expert_labels=len(labelled),
        automatic_only=automatic_only,
        paired=len(paired),
        human=human,
        ppi=ppi,
        human_needed=None if human is None else labels_needed(human, width),
        ppi_needed=None if ppi is None else labels_needed(ppi, width),
        human_assumes=human_assumes,
        ppi_assumes=ppi_assumes,
        human_why_not=human_why,
        ppi_why_not=ppi_why,
        designs=dict(designs),
    )


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
    """One row per generator of the campaign's items (four queries)."""
    spec = scale_spec(campaign.scale)
    low, high = float(spec.min), float(spec.max)
    items = list(
        Item.objects.filter(campaign=campaign).values_list(
            "proof_id",
            "proof__problem_id",
            "proof__generator",
            "final_label__value",
            "final_label__source",
            "design",
            "inclusion_probability",
        )
    )
    automatic = automatic_unit_values(campaign, sorted({row[0] for row in items}))
    groups: dict[str, list[_Unit]] = defaultdict(list)
    for proof_id, problem_id, generator, value, source, design, probability in items:
        expert = None if value is None or source == LabelSource.AUTOMATIC else float(value)
        judged = automatic.get(proof_id)
        machine = (
            None if not judged else low + (high - low) * sum(v for _, v in judged) / len(judged)
        )
        groups[generator].append(_Unit(problem_id, design, probability, expert, machine))
    return [
        _generator_row(generator, groups[generator], width, (low, high))
        for generator in sorted(groups)
    ]
