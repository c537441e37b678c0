"""Parsed marking-scheme structure, its score function, validation, import parsers and renderer.

Pure Python (no Django models). The public names:

- Data model (`model.py`): `Scheme` (chains, shared prerequisites, zero-credit items,
  deductions, `round_down`, notes, guidelines; or, of `kind` SchemeKind.BANDS, `bands`),
  `Band` (a grade band: name, points, general description, the problem's lines), `Chain`, `Checkpoint` (leaf or group with
  `rule` ADDITIVE / MAX ([max k], `cap`) / LARGER ("award the larger only"), `partial`
  NONE / INTEGER / HALF), `ZeroCreditItem`, `Deduction` (MINUS points or CAP at N/7).
  `Scheme.to_dict()` / `Scheme.from_dict()` round-trip the JSON kept in
  `MarkingScheme.structure`; `Scheme.all_checkpoints()` lists groups and leaves,
  `Scheme.leaves()` the ones a grader awards (a band scheme's bands), `Checkpoint.award_levels()` the values a leaf
  accepts, `Scheme.chain_totals()` the most each chain can give with the shared
  prerequisites; `Scheme.from_chains(rubrics)` joins one rubric per reference-solution cluster into
  parallel chains. Stable ids: "c1", "c1.2" (one chain), "A1", "B2.1" (several chains),
  "s1" (shared prerequisites), "z1" (zero credit), "d1" (deductions and caps).
- Scoring (`score.py`): `compute_score(scheme, awards, deductions=()) -> Decimal` where awards
  maps leaf checkpoint id -> points (missing ids count 0) and deductions lists the ids of the
  deductions/caps the grader found applicable; a band scheme's awards are the one picked band
  with its points, which are the score. Order: leaf awards -> groups (larger only,
  [max k], additive; each at most its points) -> chains -> shared prerequisites added once ->
  the best chain -> of the applied deductions and caps the one lowering that subtotal most ->
  clamp 0-7 -> round down when `scheme.round_down`. `score_breakdown(...)` gives every step
  (values per id, chains, best_chain, subtotal, the deduction that counted, score);
  `check_awards(...)` lists problems in words; bad awards raise `AwardError` (a ValueError).
- Validation (`validate.py`): `validate(scheme) -> list[Message]`; `Message(level error|warning,
  text in words, where = item id, line = source line)`, `.to_dict()` for
  `MarkingScheme.validation`; `has_errors(messages)`.
- Import (`parse.py`): `parse_scheme(content, fmt) -> ParseResult` (unpacks as
  `scheme, messages`; `.guidelines` holds the text to keep when nothing parsed; `.is_valid`)
  for fmt in `FORMATS`: "proofbench_markdown" (also "markdown"), "matharena_json" (whole file
  with problem_id=..., one entry, or its item list), "imobench_guidelines" ((Partial)/(Almost)
  text: a band scheme, Correct 7 / Almost 6 / Partial 1 / Incorrect 0 as IMO-Bench's grader
  gives, a line stating its own points making a band of its own), "refgrader_plain" /
  "_approachability" / "_milestones" / "_hybrid" (RefGrader's own rubric documents, or rubrics
  written in ProofBench's sections as our prompts ask). One function per format too:
  `parse_proofbench`, `parse_matharena`, `parse_imobench`, `parse_refgrader`,
  `parse_refgrader_clusters(texts, design)` (one chain per reference-solution cluster),
  `guideline_categories(text)`.
- Rendering (`render.py`): `scheme_to_markdown(scheme)`: ProofBench's three sections, which
  `parse_proofbench` reads back to the same structure (a band scheme: IMO-ProofBench's
  guidelines, read back by `parse_imobench`).
"""

from .model import (
    MAX_SCORE,
    Band,
    Chain,
    Checkpoint,
    Deduction,
    DeductionKind,
    Partial,
    Rule,
    Scheme,
    SchemeKind,
    ZeroCreditItem,
    format_points,
)
from .parse import FORMATS, ParseResult, parse_scheme
from .parse_imobench import guideline_categories, parse_imobench
from .parse_matharena import parse_matharena
from .parse_proofbench import parse_proofbench
from .parse_refgrader import parse_refgrader, parse_refgrader_clusters
from .render import scheme_to_markdown
from .score import AwardError, ScoreBreakdown, check_awards, compute_score, score_breakdown
from .validate import Level, Message, has_errors, validate

__all__ = [
    "FORMATS",
    "MAX_SCORE",
    "Level",
    "Message",
    "ParseResult",
    "guideline_categories",
    "has_errors",
    "parse_imobench",
    "parse_matharena",
    "parse_proofbench",
    "parse_refgrader",
    "parse_refgrader_clusters",
    "parse_scheme",
    "scheme_to_markdown",
    "validate",
    "AwardError",
    "Band",
    "Chain",
    "Checkpoint",
    "Deduction",
    "DeductionKind",
    "Partial",
    "Rule",
    "Scheme",
    "SchemeKind",
    "ScoreBreakdown",
    "ZeroCreditItem",
    "check_awards",
    "compute_score",
    "format_points",
    "score_breakdown",
]
