"""Parsed marking-scheme structure, its score function, validation, import parsers and renderer.

Pure Python (no Django models). The public names:

- Data model (`model.py`): `Scheme` (chains, shared prerequisites, zero-credit items,
  deductions, `round_down`, notes, guidelines), `Chain`, `Checkpoint` (leaf or group with
  `rule` ADDITIVE / MAX ([max k], `cap`) / LARGER ("award the larger only"), `partial`
  NONE / INTEGER / HALF), `ZeroCreditItem`, `Deduction` (MINUS points or CAP at N/7).
  `Scheme.to_dict()` / `Scheme.from_dict()` round-trip the JSON kept in
  `MarkingScheme.structure`; `Scheme.all_checkpoints()` lists groups and leaves,
  `Scheme.leaves()` the ones a grader awards, `Checkpoint.award_levels()` the values a leaf
  accepts; `Scheme.from_chains(rubrics)` joins one rubric per reference-solution cluster into
  parallel chains. Stable ids: "c1", "c1.2" (one chain), "A1", "B2.1" (several chains),
  "s1" (shared prerequisites), "z1" (zero credit), "d1" (deductions and caps).
- Scoring (`score.py`): `compute_score(scheme, awards, deductions=()) -> Decimal` where awards
  maps leaf checkpoint id -> points (missing ids count 0) and deductions lists the ids of the
  deductions/caps the grader found applicable; `score_breakdown(...)` gives every step;
  `check_awards(...)` lists problems in words; bad awards raise `AwardError` (a ValueError).
"""

from .model import (
    MAX_SCORE,
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
from .score import AwardError, ScoreBreakdown, check_awards, compute_score, score_breakdown

__all__ = [
    "MAX_SCORE",
    "AwardError",
    "Chain",
    "Checkpoint",
    "Deduction",
    "DeductionKind",
    "Partial",
    "Rule",
    "Scheme",
    "ScoreBreakdown",
    "ZeroCreditItem",
    "check_awards",
    "compute_score",
    "format_points",
    "score_breakdown",
]
