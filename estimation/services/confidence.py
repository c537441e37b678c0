"""Label confidence: a rater model over a campaign's experts and automatic graders, chosen per
campaign by held-out calibration among the candidates of adjudication.rater_models (Dawid-Skene,
one-coin, an ordinal model of two parameters a rater, Dawid-Skene shrunk towards an ordinal or
a pooled matrix), fitted on demand (the agreement page's button, the API, the fit command) and
after a grader evaluation finishes, never on each grade. `campaign_rater_model_fit` is the entry
point (a background job may call it).

The raters of an item (from every lower app), each giving one class of the campaign's scale:
- each expert ("expert:<user id>"): their submitted grade;
- each verifier ("verifier:<name>"): the mean of its scored analyses of the proof;
- each grader evaluation of the campaign ("grader:<evaluation id>"): the mean of its runs;
- each dataset's imported automatic rating ("imported:<source>").
An automatic value on 0-1 is put on the campaign scale linearly (min + u x (max - min)) and read
as the nearest scale value (halfway: the lower, as everywhere); the model learns how each
rater's values relate to the truth, so no map has to be right. Items whose label is gold
(adjudicated, imported, or marked gold) enter as known classes. The k automatic raters of an
item count as one voice about it (each observation weighted 1/k in the E-step, each rater
keeping its own parameters): machines often share their errors (one model family, one set of
samples). Experts and automatic raters are the two groups the models pool within.

The choice: each candidate is fitted five times, a fifth of the held-out cases hidden each time
(gold items with their class hidden; one judgement of each item two or more experts graded,
removed), and scored by its log loss on them; the least wins (not the best fit). The winner's
posteriors are averaged over ten bootstrap fits (its parameters are estimates) and softened by a
temperature fitted on the held-out cases when there are at least 30. The fit stores the chosen
model, every candidate's score, the temperature, and the calibration measured on the held-out
cases (reliability table, expected calibration error with a bootstrap interval over the cases;
with fewer than 30 cases no error is stated: too little evidence).

A label's confidence is the posterior of its class. What it assumes: that the raters' errors are
independent given the truth (except an item's automatic raters, one voice) and that a rater's
errors do not depend on the item; benchmarks/bench_confidence.py measures it on campaigns where
neither holds (RESULTS.md). Routing (`automatic_posteriors`) reuses the stored fit for proofs no
expert has seen: the posterior from their automatic judgements alone.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from decimal import Decimal

from django.db import transaction
from django.utils import timezone

from adjudication.models import FinalLabel, LabelSource
from adjudication.services import label_confidences_set
from annotation.models import Campaign, Grade, GradeStatus, Item
from annotation.scales import nearest, prediction_on_unit, scale_spec, shown
from core.queries import of_ids
from estimation.models import RaterModelFit
from graders.models import GraderPrediction
from problems.models import Proof, VerifierAnalysis

GOLD_SOURCES = frozenset({LabelSource.ADJUDICATION, LabelSource.IMPORTED})


@dataclass(frozen=True)
class Rater:
    key: str
    name: str
    kind: str  # expert | verifier | grader | imported


def unit_class(value: float, values: list[float]) -> int:
    """The class index of a 0-1 value on a scale of `values`."""
    on_scale = values[0] + value * (values[-1] - values[0])
    return values.index(nearest(on_scale, values))


def imported_automatic_ratings(proof_ids: list[int]) -> dict[int, list[tuple[str, float]]]:
    """Per proof, the automatic ratings its dataset shipped (`Proof.metadata["imported_ratings"]`
    of kind "automatic"), each as (source, value on 0-1), in one query."""
    found: dict[int, list[tuple[str, float]]] = defaultdict(list)
    for proof_id, entries in (
        of_ids(Proof.objects.all(), "id", proof_ids)
        .filter(metadata__has_key="imported_ratings")
        .values_list("id", "metadata__imported_ratings")
    ):
        for entry in entries or []:
            if not isinstance(entry, dict) or entry.get("kind") != "automatic":
                continue
            try:
                value, maximum = float(entry["value"]), float(entry["max"])
            except (KeyError, TypeError, ValueError):
                continue
            if maximum > 0 and 0 <= value <= maximum:
                found[proof_id].append((str(entry.get("source") or ""), value / maximum))
    return found


def automatic_unit_values(
    campaign: Campaign, proof_ids: list[int]
) -> dict[int, list[tuple[Rater, float]]]:
    """Per proof, (rater, value on 0-1) of every automatic rater that judged it: a verifier's
    mean over its scored analyses, a grader evaluation's mean over its runs, each imported
    automatic rating. Three queries."""
    found: dict[int, list[tuple[Rater, float]]] = defaultdict(list)
    verifier_scores: dict[tuple[int, str], list[float]] = defaultdict(list)
    for proof_id, verifier, score in (
        of_ids(VerifierAnalysis.objects.all(), "proof", proof_ids)
        .filter(score__isnull=False)
        .values_list("proof_id", "verifier", "score")
    ):
        verifier_scores[(proof_id, verifier)].append(float(score))
    for (proof_id, verifier), scores in verifier_scores.items():
        rater = Rater(f"verifier:{verifier}", verifier, "verifier")
        found[proof_id].append((rater, sum(scores) / len(scores)))
    runs: dict[tuple[int, int], list[float]] = defaultdict(list)
    names: dict[int, str] = {}
    for proof_id, evaluation_id, name, score, scale in of_ids(
        GraderPrediction.objects.filter(evaluation__campaign=campaign), "item__proof", proof_ids
    ).values_list(
        "item__proof_id",
        "evaluation_id",
        "evaluation__name",
        "score",
        "evaluation__prediction_scale",
    ):
        names[evaluation_id] = name
        runs[(proof_id, evaluation_id)].append(prediction_on_unit(score, scale))
    for (proof_id, evaluation_id), scores in runs.items():
        rater = Rater(f"grader:{evaluation_id}", names[evaluation_id], "grader")
        found[proof_id].append((rater, sum(scores) / len(scores)))
    for proof_id, ratings in imported_automatic_ratings(proof_ids).items():
        for source, value in ratings:
            found[proof_id].append(
                (Rater(f"imported:{source}", source or "imported rating", "imported"), value)
            )
    return found


def automatic_judgements(
    campaign: Campaign, proof_ids: list[int], values: list[float]
) -> dict[int, list[tuple[Rater, int]]]:
    """`automatic_unit_values`, each value read as a class of the scale `values`."""
    return {
        proof_id: [(rater, unit_class(value, values)) for rater, value in judged]
        for proof_id, judged in automatic_unit_values(campaign, proof_ids).items()
    }


def campaign_rater_model_fit(*, campaign_id: int) -> RaterModelFit | None:
    """Fits the campaign's rater model and stores it with each label's confidence (None, and
    nothing stored, when the campaign has no judgement at all)."""
    campaign = Campaign.objects.get(pk=campaign_id)
    values = [float(v) for v in scale_spec(campaign.scale).values]
    items = list(Item.objects.filter(campaign=campaign).values_list("id", "proof_id", "is_gold"))
    index = {item_id: n for n, (item_id, _, _) in enumerate(items)}
    raters: dict[str, Rater] = {}
    observations: list[tuple[int, str, int, float]] = []
    for item_id, expert_id, username, score in Grade.objects.filter(
        item__campaign=campaign, status=GradeStatus.SUBMITTED, score__isnull=False
    ).values_list("item_id", "expert_id", "expert__username", "score"):
        rater = raters.setdefault(
            f"expert:{expert_id}", Rater(f"expert:{expert_id}", username, "expert")
        )
        klass = values.index(nearest(float(score), values))
        observations.append((index[item_id], rater.key, klass, 1.0))
    automatic = automatic_judgements(campaign, sorted({p for _, p, _ in items}), values)
    for item_id, proof_id, _ in items:
        judged = automatic.get(proof_id, ())
        for rater, klass in judged:
            raters.setdefault(rater.key, rater)
            observations.append((index[item_id], rater.key, klass, 1 / len(judged)))
    if not observations:
        return None
    labels = {
        item_id: (value, source)
        for item_id, value, source in FinalLabel.objects.filter(
            item__campaign=campaign
        ).values_list("item_id", "value", "source")
    }
    gold_items = {item_id for item_id, _, is_gold in items if is_gold}
    gold = {
        index[item_id]: values.index(nearest(float(value), values))
        for item_id, (value, source) in labels.items()
        if source in GOLD_SOURCES or item_id in gold_items
    }
    # numpy (and the estimator built on it) only where a model is fitted or read: every process
    # loads this module at start-up (the routing receivers), and an import or an export never
    # needs numpy (about 0.1 CPU-second of each `manage.py` start).
    import numpy as np

    from adjudication.rater_models import Observations, rater_model_choose

    keys = sorted(raters)
    rater_index = {key: n for n, key in enumerate(keys)}
    choice = rater_model_choose(
        Observations.of(
            tasks=[t for t, _, _, _ in observations],
            workers=[rater_index[k] for _, k, _, _ in observations],
            labels=[c for _, _, c, _ in observations],
            weights=[weight for _, _, _, weight in observations],
            n_tasks=len(items),
            n_workers=len(keys),
            n_classes=len(values),
            gold=gold,
            groups=[0 if raters[key].kind == "expert" else 1 for key in keys],
        ),
        seed=campaign.pk,
    )
    model = choice.model
    counts = defaultdict(int)
    for _, key, _, _ in observations:
        counts[key] += 1
    confidences = {
        item_id: (
            value,
            float(model.posteriors[index[item_id], values.index(nearest(float(value), values))]),
        )
        for item_id, (value, _) in labels.items()
    }
    return rater_model_store(
        campaign_id=campaign.pk,
        classes=[shown(v) for v in scale_spec(campaign.scale).values],
        priors=[round(float(p), 6) for p in model.priors],
        raters=[
            {
                "key": key,
                "name": raters[key].name,
                "kind": raters[key].kind,
                "judgements": counts[key],
                "error_rate": round(model.error_rate(n), 6),
                "confusion": np.round(model.confusion[n], 6).tolist(),
            }
            for n, key in enumerate(keys)
        ],
        items=len({t for t, _, _, _ in observations}),
        gold=len(gold),
        judgements=len(observations),
        iterations=model.iterations,
        confidences=confidences,
        model=choice.candidate,
        heldout_scores=choice.scores,
        temperature=round(choice.temperature, 6),
        calibration=calibration_summary(choice),
    )


def calibration_summary(choice) -> dict:
    """What the fit stores of its held-out calibration (see RaterModelFit.calibration)."""
    from adjudication.rater_models import MIN_CASES

    calibration = choice.calibration
    ece = calibration.ece() if choice.enough else None
    interval = calibration.ece_interval() if choice.enough else None
    return {
        "cases": choice.cases,
        "gold_cases": choice.gold_cases,
        "judgement_cases": choice.judgement_cases,
        "enough": choice.enough,
        "minimum": MIN_CASES,
        "ece": None if ece is None else round(ece, 6),
        "ece_low": None if interval is None else round(interval[0], 6),
        "ece_high": None if interval is None else round(interval[1], 6),
        "rows": calibration.rows(),
    }


@transaction.atomic
def rater_model_store(
    *,
    campaign_id: int,
    classes: list[str],
    priors: list[float],
    raters: list[dict],
    items: int,
    gold: int,
    judgements: int,
    iterations: int,
    confidences: dict[int, tuple[Decimal, float]],
    model: str = "dawid-skene",
    heldout_scores: dict[str, float] | None = None,
    temperature: float = 1.0,
    calibration: dict | None = None,
) -> RaterModelFit:
    """Replaces the campaign's fit and, through adjudication, sets each labelled item's
    confidence (`confidences`: item id -> (the label value fitted, P(its class)); see
    `adjudication.services.labels.label_confidences_set`)."""
    fit, _ = RaterModelFit.objects.update_or_create(
        campaign_id=campaign_id,
        defaults={
            "classes": classes,
            "priors": priors,
            "raters": raters,
            "items": items,
            "gold": gold,
            "judgements": judgements,
            "iterations": iterations,
            "model": model,
            "heldout_scores": heldout_scores or {},
            "temperature": temperature,
            "calibration": calibration or {},
            "fitted_at": timezone.now(),
        },
    )
    label_confidences_set(campaign_id=campaign_id, confidences=confidences)
    return fit


@dataclass(frozen=True)
class ProofPosterior:
    """The rater model's posterior over the scale's classes from a proof's automatic judgements,
    and the class its verifiers' scores give (their mean, read on the scale; None without)."""

    posterior: list[float]
    verifier_class: int | None


def automatic_posteriors(campaign: Campaign, proof_ids: list[int]) -> dict[int, ProofPosterior]:
    """Per proof with automatic judgements by raters of the campaign's stored fit, the fit's
    posterior from those judgements alone, tempered by the fit's temperature as the labels'
    confidences are (empty without a fit, or one on another scale)."""
    fit = RaterModelFit.objects.filter(campaign=campaign).first()
    if fit is None:
        return {}
    import numpy as np  # loaded only here and by the fit (see campaign_rater_model_fit)

    from adjudication.estimators import posterior
    from adjudication.rater_models import temper

    values = [float(v) for v in scale_spec(campaign.scale).values]
    if len(fit.classes) != len(values):
        return {}
    by_key = {rater["key"]: rater for rater in fit.raters}
    found = {}
    for proof_id, judged in automatic_unit_values(campaign, proof_ids).items():
        known = [(by_key[r.key], unit_class(v, values)) for r, v in judged if r.key in by_key]
        if not known:
            continue
        verifier = [v for r, v in judged if r.kind == "verifier"]
        plain = posterior(
            fit.priors,
            [np.asarray(r["confusion"]) for r, _ in known],
            [k for _, k in known],
            [1 / len(known)] * len(known),  # one voice, as in the fit
        )
        found[proof_id] = ProofPosterior(
            posterior=temper(plain[None, :], float(fit.temperature), {})[0].tolist(),
            verifier_class=unit_class(sum(verifier) / len(verifier), values) if verifier else None,
        )
    return found
