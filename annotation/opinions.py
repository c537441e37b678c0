"""Where an automatic second opinion of a proof comes from (issue #17: a second opinion revealed
only after the expert commits).

A campaign names a source (`Campaign.second_opinion`): the verifier analyses of the proof
(`problems.VerifierAnalysis`, which verifier runs and imports write) or a grader evaluation's
predictions (`graders.GraderPrediction`). Verifier analyses live below this app and are read
here. Grader evaluations live in the graders app, above this one: it registers its reader at
start-up (`register`, called from `GradersConfig.ready()`), so this app asks without importing
it, as apps below tell apps above through signals.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal

from annotation.models import Grade, Item, Scale, SecondOpinion, SecondOpinionSource
from problems.models import VerifierAnalysis

# Analyses shown at most (the newest first where a source has an order): a reveal is read in
# a minute, not scrolled through.
MAX_ANALYSES = 8


@dataclass(frozen=True)
class Opinion:
    """An automatic judgement of one proof: its score on `scale`, where it came from, and the
    analyses behind it ({title, score, text}, text in Markdown)."""

    score: Decimal
    scale: str
    origin: str
    analyses: list[dict] = field(default_factory=list)


Reader = Callable[[Item, str], "Opinion | None"]
_READERS: dict[str, Reader] = {}


def register(source: str, reader: Reader) -> None:
    """Makes `reader(item, only)` the reader of `source` (`only`: the campaign's
    `second_opinion_from`, empty for any)."""
    _READERS[source] = reader


def opinion_for(item: Item) -> Opinion | None:
    """The automatic opinion of the item's proof from the campaign's source, or None when there
    is none (no scored analysis, no prediction, or the source is off)."""
    campaign = item.campaign
    reader = _READERS.get(campaign.second_opinion)
    if reader is None:
        return None
    return reader(item, campaign.second_opinion_from.strip())


def as_decimal(value: float) -> Decimal:
    return Decimal(str(round(value, 3))).normalize()


def verifier_opinion(item: Item, only: str) -> Opinion | None:
    """The proof's verifier analyses that have a score (a failed sample is no opinion): their
    mean score on 0 / 0.5 / 1 and the analyses themselves."""
    analyses = VerifierAnalysis.objects.filter(proof_id=item.proof_id, score__isnull=False)
    if only:
        analyses = analyses.filter(verifier=only)
    rows = list(
        analyses.order_by("verifier", "sample_key").values(
            "verifier", "sample_key", "score", "text"
        )
    )
    if not rows:
        return None
    verifiers = sorted({row["verifier"] for row in rows})
    mean = statistics.fmean(float(row["score"]) for row in rows)
    return Opinion(
        score=as_decimal(mean),
        scale=Scale.TERNARY,
        origin=f"{', '.join(verifiers)}: mean of {len(rows)} scored "
        f"analys{'is' if len(rows) == 1 else 'es'}",
        analyses=[
            {
                "title": f"{row['verifier']} · sample {row['sample_key']}",
                "score": str(row["score"].normalize()),
                "text": row["text"],
            }
            for row in rows[:MAX_ANALYSES]
        ],
    )


register(SecondOpinionSource.VERIFIER, verifier_opinion)


def ordinary_revision_refusal(grade: Grade, item: Item) -> str | None:
    """Why `grade` cannot take an ordinary revision: its expert saw the automatic opinion, and
    after that the one change allowed is the revision with a reason, on the second opinion
    panel. A case returned to the experts for discussion lifts this (the adjudicator asked)."""
    if not item.campaign.second_opinion or item.judgements_visible:
        return None
    if SecondOpinion.objects.filter(grade_id=grade.pk, score__isnull=False).exists():
        return (
            "You have seen the automatic second opinion of this proof: after it you may change "
            "your score once, with a reason, on the second opinion panel."
        )
    return None


def second_opinion_can_revise(*, row: SecondOpinion, item: Item) -> bool:
    """Whether the page offers the one revision after the reveal: an opinion was shown, not yet
    revised, and the grade may still change (campaign open, label not final unless gold)."""
    return (
        row.available
        and not row.revised
        and item.campaign.is_open
        and (not item.is_final or item.is_gold)
    )
