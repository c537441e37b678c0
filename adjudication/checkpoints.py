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
- Intervals: percentile bootstrap over proofs (1000 resamples, seed 0; numpy, imported only here:
  each resample adds up its drawn proofs' pairs, coincidences or ranks). A scheme version is one
  problem's, so its proofs resample within one problem: nothing is pooled across problems, and
  no figure needs clustering by problem.
- Below MIN_PROOFS double-scored (or labelled) proofs a figure is not stated: "too few
  double-scored proofs to say". Below ROUGH_BELOW it is stated flagged "few proofs: intervals
  rough": there the percentile bootstrap covers less than 95% (benchmarks/bench_checkpoints.py
  measures it; RESULTS.md "Checkpoint intervals").
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING

from django.db.models import Q, QuerySet

from adjudication.agreement import _unit_coincidences, krippendorff_alpha_ordinal, spearman
from adjudication.models import FinalLabel
from annotation.models import Campaign, Grade, GradeStatus
from rubrics.models import MarkingScheme

if TYPE_CHECKING:
    from rubrics.structure import Scheme

MIN_PROOFS = 5
# Below this many proofs the percentile bootstrap may cover less than it claims (as little as
# 70-75% for a nominal 95% at 5 proofs, 90-92% at 10-20: benchmarks/bench_checkpoints.py,
# RESULTS.md "Checkpoint intervals"; 93-97% from 50): flagged "rough"
ROUGH_BELOW = 50
ROUGH = "few proofs: intervals rough"
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


def _percentile_interval(values, n_resamples: int, confidence: float = 0.95):
    """The percentile interval of the defined resampled values (numpy's linear percentile, as
    adjudication.agreement); None when fewer than half of the resamples give a value."""
    import numpy as np

    values = values[~np.isnan(values)]
    if len(values) < n_resamples / 2:
        return None
    tail = 100 * (1 - confidence) / 2
    low, high = np.percentile(values, [tail, 100 - tail])
    return float(low), float(high)


def bootstrap_percent_agreement(
    units: Sequence[Sequence[float]], *, n_resamples: int = N_RESAMPLES, seed: int = 0
) -> tuple[float, float] | None:
    """95% percentile bootstrap of `percent_agreement`, resampling units (numpy: each unit's
    equal pairs and pairs added up per resample)."""
    import numpy as np

    if len(units) < 2:
        return None
    equal = np.array([percent_agreement([u]) * (len(u) * (len(u) - 1) / 2) for u in units])
    pairs = np.array([len(u) * (len(u) - 1) / 2 for u in units])
    draws = np.random.default_rng(seed).integers(0, len(units), (n_resamples, len(units)))
    with np.errstate(invalid="ignore", divide="ignore"):
        found = equal[draws].sum(axis=1) / pairs[draws].sum(axis=1)
    return _percentile_interval(found, n_resamples)


def _row_ranks(x):
    """Average ranks (from 1) along each row of a 2-D array."""

    less = (x[:, None, :] < x[:, :, None]).sum(axis=2)
    same = (x[:, None, :] == x[:, :, None]).sum(axis=2)
    return less + (same + 1) / 2


def bootstrap_spearman(
    x: Sequence[float], y: Sequence[float], *, n_resamples: int = N_RESAMPLES, seed: int = 0
) -> tuple[float, float] | None:
    """95% percentile bootstrap of `spearman`, resampling the pairs (numpy, in chunks so that
    the rank comparisons stay within a few tens of megabytes)."""
    import numpy as np

    n = len(x)
    if n < 2:
        return None
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    draws = np.random.default_rng(seed).integers(0, n, (n_resamples, n))
    chunk = max(1, 20_000_000 // (n * n))
    found = []
    for start in range(0, n_resamples, chunk):
        rows = draws[start : start + chunk]
        rx, ry = _row_ranks(x[rows]), _row_ranks(y[rows])
        rx -= rx.mean(axis=1, keepdims=True)
        ry -= ry.mean(axis=1, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            found.append(
                (rx * ry).sum(axis=1) / np.sqrt((rx * rx).sum(axis=1) * (ry * ry).sum(axis=1))
            )
    values = np.concatenate(found)
    values[~np.isfinite(values)] = np.nan
    return _percentile_interval(values, n_resamples)


def coincidence_rows(units: Sequence[Sequence[float]], levels: Sequence[float]):
    """Each unit's contribution to the coincidence matrix, flat: an array (units x k*k)."""
    import numpy as np

    index = {float(v): n for n, v in enumerate(levels)}
    k = len(levels)
    rows = np.zeros((len(units), k * k))
    for u, unit in enumerate(units):
        for c, d, w in _unit_coincidences([index[float(v)] for v in unit]):
            rows[u, c * k + d] += w
    return rows


def ordinal_alpha_rows(coincidences, k: int):
    """Krippendorff's ordinal alpha of each row of flat coincidence matrices (rows x k*k), as
    adjudication.agreement.alpha_from_coincidence (nan where undefined)."""
    import numpy as np

    coin = coincidences.reshape(-1, k, k)
    marginals = coin.sum(axis=2)
    total = marginals.sum(axis=1)
    cumulative = np.concatenate([np.zeros((len(coin), 1)), np.cumsum(marginals, axis=1)], axis=1)
    observed = np.zeros(len(coin))
    expected = np.zeros(len(coin))
    for c in range(k):
        for d in range(k):
            if c == d:
                continue
            lo, hi = min(c, d), max(c, d)
            dist = (
                cumulative[:, hi + 1]
                - cumulative[:, lo]
                - (marginals[:, lo] + marginals[:, hi]) / 2
            ) ** 2
            observed += coin[:, c, d] * dist
            expected += marginals[:, c] * marginals[:, d] * dist
    with np.errstate(invalid="ignore", divide="ignore"):
        alpha = 1.0 - (total - 1) * observed / expected
    alpha[(expected == 0) | (total <= 1)] = np.nan
    return alpha


def bootstrap_ordinal_alpha(
    units: Sequence[Sequence[float]],
    levels: Sequence[float],
    *,
    n_resamples: int = N_RESAMPLES,
    seed: int = 0,
) -> tuple[float, float] | None:
    """95% percentile bootstrap of the ordinal alpha, resampling units: each resample's
    coincidences are its drawn units' contributions added up (one matrix product)."""
    import numpy as np

    if len(units) < 2:
        return None
    rows = coincidence_rows(units, levels)
    draws = np.random.default_rng(seed).integers(0, len(units), (n_resamples, len(units)))
    counts = np.zeros((n_resamples, len(units)))
    np.add.at(counts, (np.arange(n_resamples)[:, None], draws), 1)
    return _percentile_interval(ordinal_alpha_rows(counts @ rows, len(levels)), n_resamples)


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


def checklist_grades(campaign: Campaign) -> QuerySet[Grade]:
    """The campaign's submitted grades that used their scheme's checklist: some award or
    deduction, or a score of 0 (nothing awarded on the checklist is a checklist answer too)."""
    used = (
        (~Q(awards={}) & ~Q(awards=None)) | (~Q(deductions=[]) & ~Q(deductions=None)) | Q(score=0)
    )
    return Grade.objects.filter(
        used, item__campaign=campaign, status=GradeStatus.SUBMITTED, scheme__isnull=False
    )


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
            row.agreement_ci = bootstrap_percent_agreement(doubled, n_resamples=n_resamples)
            row.alpha = krippendorff_alpha_ordinal(doubled, levels)
            row.alpha_ci = bootstrap_ordinal_alpha(doubled, levels, n_resamples=n_resamples)
            if row.alpha is None:
                row.agreement_note = "every award the same: alpha undefined"
            elif row.alpha < AMBIGUOUS_ALPHA:
                row.flags.append("ambiguous")
            if len(doubled) < ROUGH_BELOW:
                row.flags.append(ROUGH)
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
            row.discrimination_ci = bootstrap_spearman(
                [a for a, _ in pairs], [b for _, b in pairs], n_resamples=n_resamples
            )
            if row.discrimination is None:
                row.discrimination_note = "no spread in the award or the label: undefined"
            elif row.discrimination_ci is not None and row.discrimination_ci[0] <= 0:
                row.flags.append("does not separate")
            if len(pairs) < ROUGH_BELOW and ROUGH not in row.flags:
                row.flags.append(ROUGH)
        found.append(row)
    return found


def campaign_checkpoint_figures(
    campaign: Campaign, *, n_resamples: int = N_RESAMPLES
) -> list[SchemeFigures]:
    """Every scheme version the campaign's grades used, with its checkpoints' figures, in the
    order of the problems. Three queries."""
    by_scheme: dict[int, dict[int, list[dict]]] = defaultdict(lambda: defaultdict(list))
    for grade in checklist_grades(campaign).values("item_id", "scheme_id", "awards"):
        by_scheme[grade["scheme_id"]][grade["item_id"]].append(grade["awards"] or {})
    if not by_scheme:
        return []
    labels = {
        item_id: float(value)
        for item_id, value in FinalLabel.objects.filter(item__campaign=campaign).values_list(
            "item_id", "value"
        )
    }
    # the scheme parsers are imported only where a campaign's figures are computed: every
    # export asks `checklist_grades` first, and one graded without checklists never needs them
    from rubrics.structure import Scheme

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


def campaign_checkpoint_figures_cached(campaign: Campaign) -> list[SchemeFigures]:
    """`campaign_checkpoint_figures`, kept in the cache until a grade or a label of the campaign
    changes, as the agreement figures are (`adjudication.metrics.campaign_figures_cached`)."""
    from adjudication.metrics import campaign_figures_cached

    return campaign_figures_cached(campaign, "checkpoints", campaign_checkpoint_figures)


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
              f"of the discrimination reaching 0 or below), '{ROUGH}' (a figure from fewer "
              f"than {ROUGH_BELOW} proofs: its 95% interval covered as little as 70% (5 "
              "proofs) to 91% (20) in simulation)"),
)  # fmt: skip


def checkpoint_csv_rows(schemes: list[SchemeFigures]) -> list[list[object]]:
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
