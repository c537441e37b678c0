"""Checkpoint analytics: for each checkpoint of each marking scheme a campaign's grades used, how
well double-scorers agree on its award and how well its award separates proofs by their final
label, each with a 95% interval, so that an admin sees which checkpoints are ambiguous (what
ProofBench's scheme refinement needs).

- The grades read: the campaign's submitted grades that point at a scheme and used its checklist
  (an award or a deduction given, or a score of 0, where nothing was earned); a checkpoint not
  awarded counts as 0 points. A band scheme's bands are its checkpoints (awarded: the band's
  points; not picked: 0).
- Agreement, over the proofs two or more experts graded on the same scheme version: percent
  agreement (the share of pairs of awards that are equal, every pair of an item) and
  Krippendorff's alpha with the ordinal metric over the checkpoint's award levels
  (adjudication.agreement.krippendorff_alpha_ordinal).
- Discrimination, over the labelled proofs: Spearman's rank correlation between the
  checkpoint's award (the mean of the proof's grades) and the proof's final label.
- Intervals: percentile bootstrap over proofs (1000 resamples, seed 0). A scheme version is one
  problem's, so its proofs resample within one problem: nothing is pooled across problems, and
  no figure needs clustering by problem.
- Below MIN_PROOFS double-scored (or labelled) proofs a figure is not stated: "too few
  double-scored proofs to say".
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

from adjudication.agreement import (
    bootstrap_alpha,
    bootstrap_ci,
    krippendorff_alpha_ordinal,
)
from adjudication.models import FinalLabel
from annotation.models import Campaign, Grade, GradeStatus
from rubrics.models import MarkingScheme
from rubrics.structure import Scheme

MIN_PROOFS = 5
N_RESAMPLES = 1000
AMBIGUOUS_ALPHA = 0.667  # Krippendorff's lowest bar for tentative conclusions
TOO_FEW_DOUBLE = "too few double-scored proofs to say"
TOO_FEW_LABELLED = "too few labelled proofs to say"


# --- Statistics (plain functions, tested against scipy and krippendorff) ----------------------


def percent_agreement(units: Sequence[Sequence[float]]) -> float | None:
    """The share of equal pairs among every pair of values of a unit (units with one value
    drop out); None without a pair."""
    equal = pairs = 0
    for unit in units:
        for i in range(len(unit)):
            for j in range(i + 1, len(unit)):
                pairs += 1
                equal += unit[i] == unit[j]
    return equal / pairs if pairs else None


def _ranks(values: Sequence[float]) -> list[float]:
    """Ranks from 1, ties given their mean rank (scipy.stats.rankdata's 'average')."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def pearson(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Pearson's correlation; None with fewer than two points or no spread."""
    n = len(x)
    if n < 2:
        return None
    mx, my = sum(x) / n, sum(y) / n
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y, strict=True))
    sxx = sum((a - mx) ** 2 for a in x)
    syy = sum((b - my) ** 2 for b in y)
    if sxx <= 0 or syy <= 0:
        return None
    return sxy / math.sqrt(sxx * syy)


def spearman(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Spearman's rank correlation (Pearson's on average ranks, as scipy.stats.spearmanr)."""
    return pearson(_ranks(x), _ranks(y))


# --- The campaign's figures --------------------------------------------------------------------


@dataclass
class CheckpointFigures:
    checkpoint_id: str
    title: str
    points: Decimal
    proofs: int  # proofs graded on the scheme with the checklist
    double_scored: int
    mean_award: float | None
    agreement: float | None = None
    agreement_ci: tuple[float, float] | None = None
    alpha: float | None = None
    alpha_ci: tuple[float, float] | None = None
    labelled: int = 0
    discrimination: float | None = None
    discrimination_ci: tuple[float, float] | None = None
    agreement_note: str = ""
    discrimination_note: str = ""
    flags: list[str] = field(default_factory=list)


@dataclass
class SchemeFigures:
    scheme_id: int
    problem: str
    version: int
    kind: str
    grades: int
    proofs: int
    double_scored: int
    checkpoints: list[CheckpointFigures]


def _award(awards: dict, checkpoint_id: str) -> float:
    try:
        return float(Decimal(str(awards.get(checkpoint_id) or 0)))
    except (InvalidOperation, ValueError):
        return 0.0


def _used_checklist(grade: dict) -> bool:
    return bool(grade["awards"] or grade["deductions"]) or grade["score"] == 0


def _agreement_stat(units):
    return percent_agreement([u for u in units if len(u) > 1])


def _discrimination_stat(pairs):
    return spearman([a for a, _ in pairs], [b for _, b in pairs])


def checkpoint_figures(
    *,
    scheme: Scheme,
    units: dict[int, list[dict]],
    labels: dict[int, float],
    n_resamples: int = N_RESAMPLES,
) -> list[CheckpointFigures]:
    """The figures of each checkpoint of `scheme` from `units` (item id -> the awards dicts of
    its grades on the scheme) and `labels` (item id -> final label value)."""
    found = []
    double = {item: grades for item, grades in units.items() if len(grades) > 1}
    for leaf in scheme.leaves():
        levels = [float(v) for v in leaf.award_levels()]
        per_item = {
            item: [_award(awards, leaf.id) for awards in grades] for item, grades in units.items()
        }
        all_awards = [a for values in per_item.values() for a in values]
        row = CheckpointFigures(
            checkpoint_id=leaf.id,
            title=leaf.title,
            points=leaf.points,
            proofs=len(units),
            double_scored=len(double),
            mean_award=sum(all_awards) / len(all_awards) if all_awards else None,
        )
        # award levels seen but not on the leaf's list (an older scheme's): kept, in order
        levels = sorted(set(levels) | set(all_awards) | {0.0})
        doubled = [per_item[item] for item in sorted(double)]
        if len(doubled) < MIN_PROOFS:
            row.agreement_note = TOO_FEW_DOUBLE
        else:
            row.agreement = percent_agreement(doubled)
            row.agreement_ci = bootstrap_ci(
                doubled, _agreement_stat, n_resamples=n_resamples, seed=0
            )
            row.alpha = krippendorff_alpha_ordinal(doubled, levels)
            row.alpha_ci = bootstrap_alpha(doubled, levels, n_resamples=n_resamples, seed=0)
            if row.alpha is None:
                row.agreement_note = "every award the same: alpha undefined"
            elif row.alpha < AMBIGUOUS_ALPHA:
                row.flags.append("ambiguous")
        pairs = [
            (sum(values) / len(values), labels[item])
            for item, values in sorted(per_item.items())
            if item in labels
        ]
        row.labelled = len(pairs)
        if len(pairs) < MIN_PROOFS:
            row.discrimination_note = TOO_FEW_LABELLED
        else:
            row.discrimination = _discrimination_stat(pairs)
            row.discrimination_ci = bootstrap_ci(
                pairs, _discrimination_stat, n_resamples=n_resamples, seed=0
            )
            if row.discrimination is None:
                row.discrimination_note = "no spread in the award or the label: undefined"
            elif row.discrimination_ci is not None and row.discrimination_ci[0] <= 0:
                row.flags.append("does not separate")
        found.append(row)
    return found


def campaign_checkpoint_figures(
    campaign: Campaign, *, n_resamples: int = N_RESAMPLES
) -> list[SchemeFigures]:
    """Every scheme version the campaign's grades used, with its checkpoints' figures, in the
    order of the problems. Three queries."""
    by_scheme: dict[int, dict[int, list[dict]]] = defaultdict(lambda: defaultdict(list))
    grades = 0
    for grade in Grade.objects.filter(
        item__campaign=campaign, status=GradeStatus.SUBMITTED, scheme__isnull=False
    ).values("item_id", "scheme_id", "awards", "deductions", "score"):
        if _used_checklist(grade):
            by_scheme[grade["scheme_id"]][grade["item_id"]].append(grade["awards"] or {})
            grades += 1
    labels = {
        item_id: float(value)
        for item_id, value in FinalLabel.objects.filter(item__campaign=campaign).values_list(
            "item_id", "value"
        )
    }
    schemes = MarkingScheme.objects.filter(pk__in=list(by_scheme)).values_list(
        "pk", "problem__external_id", "version", "structure"
    )
    found = []
    for pk, problem, version, structure in sorted(schemes, key=lambda s: (s[1], s[2])):
        scheme = Scheme.from_dict(structure or {})
        units = by_scheme[pk]
        found.append(
            SchemeFigures(
                scheme_id=pk,
                problem=problem,
                version=version,
                kind=str(scheme.kind),
                grades=sum(len(g) for g in units.values()),
                proofs=len(units),
                double_scored=sum(len(g) > 1 for g in units.values()),
                checkpoints=checkpoint_figures(
                    scheme=scheme, units=units, labels=labels, n_resamples=n_resamples
                ),
            )
        )
    return found


# The CSV's columns, each explained (the page shows the same list).
CSV_COLUMNS: tuple[tuple[str, str], ...] = (
    ("problem", "the problem's external id"),
    ("scheme_version", "the marking scheme's version the grades used"),
    ("checkpoint", "the checkpoint's id in the scheme (a band's id on a band scheme)"),
    ("title", "the checkpoint's title"),
    ("points", "the most the checkpoint awards"),
    ("proofs", "proofs graded on this scheme version with its checklist"),
    ("double_scored", "of them, proofs graded by two experts or more"),
    ("mean_award", "the mean award over those grades (not awarded: 0)"),
    ("percent_agreement", "share of equal awards among every pair of a proof's grades"),
    ("percent_agreement_lo", "95% bootstrap interval over proofs, lower end"),
    ("percent_agreement_hi", "upper end"),
    ("alpha", "Krippendorff's alpha, ordinal metric over the award levels"),
    ("alpha_lo", "95% bootstrap interval over proofs, lower end"),
    ("alpha_hi", "upper end"),
    ("labelled", "proofs graded on the scheme that have a final label"),
    ("discrimination", "Spearman's rank correlation of the mean award with the final label"),
    ("discrimination_lo", "95% bootstrap interval over proofs, lower end"),
    ("discrimination_hi", "upper end"),
    ("note", f"why a figure is empty (fewer than {MIN_PROOFS} proofs: '{TOO_FEW_DOUBLE}')"),
    ("flags", f"'ambiguous' (alpha below {AMBIGUOUS_ALPHA}), 'does not separate' (interval "
              "of the discrimination reaching 0 or below)"),
)  # fmt: skip


def csv_rows(schemes: list[SchemeFigures]) -> list[list[object]]:
    """The CSV's rows (after the header of CSV_COLUMNS' names), one per checkpoint."""

    def ci(value: tuple[float, float] | None) -> list[object]:
        return ["", ""] if value is None else [round(value[0], 6), round(value[1], 6)]

    def fig(value: float | None) -> object:
        return "" if value is None else round(value, 6)

    rows = []
    for scheme in schemes:
        for cp in scheme.checkpoints:
            rows.append(
                [
                    scheme.problem,
                    scheme.version,
                    cp.checkpoint_id,
                    cp.title,
                    f"{cp.points.normalize():f}",
                    cp.proofs,
                    cp.double_scored,
                    fig(cp.mean_award),
                    fig(cp.agreement),
                    *ci(cp.agreement_ci),
                    fig(cp.alpha),
                    *ci(cp.alpha_ci),
                    cp.labelled,
                    fig(cp.discrimination),
                    *ci(cp.discrimination_ci),
                    "; ".join(n for n in (cp.agreement_note, cp.discrimination_note) if n),
                    "; ".join(cp.flags),
                ]
            )
    return rows
