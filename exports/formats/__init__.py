"""The export formats: their columns and the rows they stream from the database.

Each format reads the final labels (or, for `annotations`, the submitted judgements) of one
campaign in keyset-paginated batches of plain values, so memory stays flat however many rows there
are (`pairs`: the judgements of a pairwise campaign's pairs of proofs). Filters: contest, year, generator, label source, minimum agreement, split.
"""

from __future__ import annotations

from annotation.models import Campaign
from exports.formats.annotations import plan_annotations
from exports.formats.base import (
    FORMATS,
    LABEL_SOURCES,
    ExportError,
    ExportOptions,
    Plan,
    pseudonym,
    split_of,
)
from exports.formats.judgements import plan_judgements
from exports.formats.labelled import plan_dmv, plan_dv, plan_proofbench
from exports.formats.pairs import plan_pairs

PLANNERS = {
    "proofbench": plan_proofbench,
    "dv": plan_dv,
    "dmv": plan_dmv,
    "annotations": plan_annotations,
    "judgements": plan_judgements,
    "pairs": plan_pairs,
}


def plan_for(fmt: str, campaign: Campaign, options: ExportOptions) -> Plan:
    try:
        planner = PLANNERS[fmt]
    except KeyError as exc:
        raise ExportError(f"unknown format {fmt!r}: choose one of {', '.join(FORMATS)}") from exc
    return planner(campaign, options)


__all__ = [
    "FORMATS",
    "LABEL_SOURCES",
    "PLANNERS",
    "ExportError",
    "ExportOptions",
    "Plan",
    "plan_for",
    "pseudonym",
    "split_of",
]
