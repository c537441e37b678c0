"""A grader evaluation's predictions as the automatic second opinion of a proof (registered
with `annotation.opinions` in GradersConfig.ready(): the annotation app sits below this one)."""

from __future__ import annotations

from annotation.models import Item, SecondOpinionSource
from annotation.opinions import MAX_ANALYSES, Opinion, as_decimal, register
from annotation.scales import PREDICTION_ON_SCALE
from graders.metrics import aggregate_runs
from graders.models import GraderEvaluation, GraderPrediction, JobStatus


def grader_opinion(item: Item, only: str) -> Opinion | None:
    """The newest finished grader evaluation that predicted the proof (any campaign's: the
    proof, not the item, is matched), its k runs aggregated as the evaluation says, and each
    run's assessment."""
    evaluations = GraderEvaluation.objects.filter(
        status=JobStatus.SUCCEEDED, predictions__item__proof_id=item.proof_id
    )
    if only:
        evaluations = evaluations.filter(name=only)
    evaluation = evaluations.order_by("-created_at", "-id").first()
    if evaluation is None:
        return None
    runs = list(
        GraderPrediction.objects.filter(evaluation=evaluation, item__proof_id=item.proof_id)
        .order_by("item_id", "run_index")
        .values("run_index", "score", "assessment", "errors")
    )
    score = aggregate_runs([run["score"] for run in runs], evaluation.aggregation)
    analyses = []
    for run in runs[:MAX_ANALYSES]:
        text = run["assessment"] or ""
        errors = [str(error) for error in run["errors"] or [] if error]
        if errors:
            text += "\n\n**Errors named:**\n\n" + "\n".join(f"- {error}" for error in errors)
        analyses.append(
            {
                "title": f"{evaluation.name} · run {run['run_index'] + 1}",
                "score": str(as_decimal(run["score"])),
                "text": text.strip() or "(no assessment given)",
            }
        )
    runs_words = f"{len(runs)} run{'s' if len(runs) != 1 else ''}"
    aggregated = f", {evaluation.aggregation}" if len(runs) > 1 else ""
    return Opinion(
        score=as_decimal(score),
        scale=PREDICTION_ON_SCALE.get(evaluation.prediction_scale, evaluation.prediction_scale),
        origin=f"grader {evaluation.name} ({runs_words}{aggregated})",
        analyses=analyses,
    )


def connect() -> None:
    register(SecondOpinionSource.GRADER, grader_opinion)
