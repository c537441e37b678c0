"""Campaigns for the label-confidence tests, built through the models from a simulated campaign
(benchmarks/simulated_campaigns.py): its experts' grades as submitted grades, its automatic
graders as one grader evaluation's predictions, its final labels (the single grade, the agreed
grade, or an adjudication to the truth) as final labels."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

from adjudication.services.labels import final_label_set
from benchmarks.simulated_campaigns import Shape, simulate
from graders.models import GraderEvaluation, GraderPrediction
from tests.annotation.factories import CampaignFactory, ItemFactory
from tests.exports.factories import grade
from tests.factories import UserFactory


def simulated_campaign(*, labels: int = 80, experts: int = 3, seed: int = 0, graders: int = 1):
    """A 0-7 campaign of about labels / 1.4 proofs (40% double-scored); returns the campaign
    with `truth` (item id -> true class) and `simulated` (the simulation)."""
    shape = replace(Shape(), labels=labels, experts=experts, graders=graders, gold=0.0)
    sim = simulate(shape, seed)
    campaign = CampaignFactory(scale="0-7", double_share=Decimal("0.4"))
    users = [
        UserFactory(username=f"sim-expert-{seed}-{n}", roles=["expert"]) for n in range(experts)
    ]
    evaluation = (
        GraderEvaluation.objects.create(
            campaign=campaign, name="simulated grader", source="jsonl", prediction_scale="0-7"
        )
        if graders
        else None
    )
    items = [ItemFactory(campaign=campaign) for _ in range(sim.obs.n_tasks)]
    grades: dict[int, list] = {}
    for task, worker, said in zip(sim.obs.tasks, sim.obs.workers, sim.obs.labels, strict=True):
        item = items[int(task)]
        if worker < experts:
            grades.setdefault(int(task), []).append(grade(item, users[int(worker)], int(said)))
        elif worker == experts:  # the first automatic grader only: one rater
            GraderPrediction.objects.create(evaluation=evaluation, item=item, score=float(said))
    for task, item in enumerate(items):
        given = grades[task]
        source = (
            "adjudication" if sim.is_gold[task] else ("agreement" if len(given) > 1 else "single")
        )
        final_label_set(
            item=item,
            value=Decimal(int(sim.final[task])),
            source=source,
            policy="tests",
            grade_ids=[g.pk for g in given],
        )
    campaign.truth = {item.pk: int(sim.truth[n]) for n, item in enumerate(items)}
    campaign.simulated = sim
    return campaign
