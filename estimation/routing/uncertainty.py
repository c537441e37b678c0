"""How unsure the automatic graders are about one proof: the formula, in one place.

Plain Python over numbers already stored (no model imports): `estimation.routing` gathers them
(verifier analyses, meta-verifications, grader-evaluation predictions) and the routing benchmark
calls the same function on simulated graders.

Three components, each in [0, 1] (1 = as unsure as the evidence can say), or None when the proof
has no evidence of that kind:

- spread: the standard deviation of the proof's n verifier scores (0 / 0.5 / 1), divided by 0.5,
  the largest standard deviation of values in [0, 1]. One score alone shows no spread, but it is
  one draw of a noisy verifier, not a settled verdict: it counts as SINGLE_SCORE_SPREAD (0.5).
  Analyses that broke the output contract (no score) are left out of the spread.
- invalidation: over the analyses that were meta-verified, the mean of (1 - mean meta score):
  an analysis whose meta-verifications rate it 0 (its claimed defects do not hold) counts 1, a
  confirmed one (meta score 1) counts 0. Meta-verifications without a score are left out.
- disagreement: the standard deviation of every grader-evaluation prediction of the proof (all
  graders, all runs, each first put on 0-1: a 0-7 score divided by 7), divided by 0.5. One
  prediction alone shows no disagreement: the component is None.
- rating: imported automatic ratings (a dataset's mean of its verifier's samples, on 0-1, such
  as DeepSeekMath-V2's `average_automatic_rating`). Only the mean was kept, so each counts with
  the largest spread that mean allows: 2 sqrt(p (1 - p)), the standard deviation of pass/fail
  samples with mean p, divided by 0.5 (a mean of 1 or 0 -> 0; 0.5 -> 1); averaged over ratings.
- model_doubt: where the campaign has a fitted rater model (over experts and automatic
  graders, chosen by held-out calibration; estimation.services.confidence), how likely the automatic label is wrong:
  1 minus the model's posterior, given the proof's automatic judgements, of the class its
  verifier scores give (the label the loop would apply; without verifier scores, of the most
  likely class), over 1 - 1/k so that a uniform posterior counts 1. It weighs each grader by
  its estimated error rates, so a verifier whose samples agree but which is often wrong (an
  error shared by a proof's samples) no longer looks sure.

The uncertainty is the mean of the components that exist. A proof with no component at all (no
scored analysis, no meta-verification, fewer than two predictions, no imported automatic rating,
no rater model) has uncertainty 1, the
maximum, and is ranked FIRST: no machine has said anything usable about it, so it can never be
labelled automatically and an expert must see it whatever the budget.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

SINGLE_SCORE_SPREAD = 0.5
NO_EVIDENCE = 1.0


@dataclass(frozen=True)
class Uncertainty:
    value: float
    spread: float | None
    invalidation: float | None
    disagreement: float | None
    verifier_scores: int
    meta_verified: int
    predictions: int
    rating: float | None = None
    model_doubt: float | None = None
    ratings: int = 0

    @property
    def has_evidence(self) -> bool:
        return any(
            c is not None
            for c in (
                self.spread,
                self.invalidation,
                self.disagreement,
                self.rating,
                self.model_doubt,
            )
        )

    def components(self) -> dict:
        """What is stored beside the rank and exported: each component and its support."""
        return {
            "spread": _rounded(self.spread),
            "invalidation": _rounded(self.invalidation),
            "disagreement": _rounded(self.disagreement),
            "rating": _rounded(self.rating),
            "model_doubt": _rounded(self.model_doubt),
            "verifier_scores": self.verifier_scores,
            "meta_verified": self.meta_verified,
            "predictions": self.predictions,
            "ratings": self.ratings,
        }


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def _std(values: Sequence[float]) -> float:
    mean = sum(values) / len(values)
    return math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))


def spread_of(scores: Sequence[float]) -> float | None:
    if not scores:
        return None
    if len(scores) == 1:
        return SINGLE_SCORE_SPREAD
    return min(1.0, _std(scores) / 0.5)


def invalidation_of(meta_scores: Iterable[Sequence[float]]) -> tuple[float | None, int]:
    """(component, number of meta-verified analyses) from each analysis's meta scores."""
    doubts = [1.0 - sum(scores) / len(scores) for scores in meta_scores if scores]
    if not doubts:
        return None, 0
    return sum(doubts) / len(doubts), len(doubts)


def disagreement_of(predictions: Sequence[float]) -> float | None:
    if len(predictions) < 2:
        return None
    return min(1.0, _std(predictions) / 0.5)


def rating_doubt_of(ratings: Sequence[float]) -> float | None:
    if not ratings:
        return None
    return sum(min(1.0, 2 * math.sqrt(max(0.0, p * (1 - p)))) for p in ratings) / len(ratings)


def model_doubt_of(
    posterior: Sequence[float] | None, label_class: int | None = None
) -> float | None:
    """1 - the posterior of `label_class` (None: of the most likely class), over 1 - 1/k:
    0 sure, 1 as unsure as a uniform posterior (capped at 1)."""
    if posterior is None or len(posterior) < 2:
        return None
    k = len(posterior)
    p = max(posterior) if label_class is None else posterior[label_class]
    return min(1.0, max(0.0, (1.0 - p) / (1.0 - 1.0 / k)))


def proof_uncertainty(
    *,
    verifier_scores: Sequence[float],
    meta_scores: Iterable[Sequence[float]] = (),
    predictions: Sequence[float] = (),
    ratings: Sequence[float] = (),
    posterior: Sequence[float] | None = None,
    label_class: int | None = None,
) -> Uncertainty:
    """verifier_scores: the proof's scored analyses (0 / 0.5 / 1); meta_scores: per meta-verified
    analysis, its scored meta-verifications (0 / 0.5 / 1); predictions: grader predictions on
    0-1; ratings: imported automatic ratings on 0-1; posterior: the rater model's posterior over
    the campaign's classes given the automatic judgements (None without a model); label_class:
    the class the verifier scores give (None: none)."""
    scores = [float(s) for s in verifier_scores]
    preds = [float(p) for p in predictions]
    rated = [float(r) for r in ratings]
    spread = spread_of(scores)
    invalidation, meta_verified = invalidation_of(
        [float(s) for s in per_analysis] for per_analysis in meta_scores
    )
    disagreement = disagreement_of(preds)
    rating = rating_doubt_of(rated)
    model_doubt = model_doubt_of(posterior, label_class)
    present = [
        c for c in (spread, invalidation, disagreement, rating, model_doubt) if c is not None
    ]
    value = sum(present) / len(present) if present else NO_EVIDENCE
    return Uncertainty(
        value=round(value, 6),
        spread=spread,
        invalidation=invalidation,
        disagreement=disagreement,
        verifier_scores=len(scores),
        meta_verified=meta_verified,
        predictions=len(preds),
        rating=rating,
        model_doubt=model_doubt,
        ratings=len(rated),
    )
