"""Gold items (an adjudicated label with its rationale and awards), calibration rounds, and
grades submitted through the real services."""

from decimal import Decimal

from django.utils import timezone

from adjudication.models import AdjudicationCase, CaseStatus, FinalLabel, LabelSource, Resolution
from annotation.models import CampaignMember, Item
from annotation.services import GradeInput, assignment_next, grade_submit
from calibration.services import calibration_round_create
from problems.models import Problem
from tests.annotation.factories import CampaignFactory, ItemFactory
from tests.factories import UserFactory
from tests.problems.page_factories import ProblemFactory, ProofFactory


def gold_item(campaign, value, *, rationale="", awards=None, topic="A", adjudicator=None) -> Item:
    """An item of `campaign` with an adjudicated final label (a new score with awards)."""
    problem: Problem = ProblemFactory(topic=topic)
    item = ItemFactory(campaign=campaign, proof=ProofFactory(problem=problem), is_final=True)
    case = AdjudicationCase.objects.create(
        item=item,
        status=CaseStatus.RESOLVED,
        opened_reason="disagreement",
        resolution=Resolution.NEW_SCORE,
        score=Decimal(str(value)),
        awards=awards or {},
        rationale=rationale,
        resolved_by=adjudicator or UserFactory(roles=["adjudicator"]),
        resolved_at=timezone.now(),
    )
    FinalLabel.objects.create(
        item=item,
        value=Decimal(str(value)),
        scale=campaign.scale,
        source=LabelSource.ADJUDICATION,
        policy="adjudication",
        scheme=item.scheme,
        case=case,
    )
    return item


def gold_round(values, *, experts=(), topics=None, name="Calibration one", rationale="Because."):
    """A real campaign holding gold items of the given values, and a round made of them."""
    source = CampaignFactory()
    topics = topics or ["A"] * len(values)
    items = [
        gold_item(source, v, rationale=rationale, topic=t)
        for v, t in zip(values, topics, strict=True)
    ]
    round = calibration_round_create(
        name=name, gold_items=items, created_by=source.created_by, experts=list(experts)
    )
    return round, items


def expert_user(username=None):
    kwargs = {"username": username} if username else {}
    return UserFactory(roles=["expert"], **kwargs)


def grade_next(round, expert, score, **data):
    """The expert takes their next item of the round and submits `score`."""
    if not CampaignMember.objects.filter(campaign=round, user=expert).exists():
        CampaignMember.objects.create(campaign=round, user=expert, role="expert")
    assignment = assignment_next(campaign=round, expert=expert)
    assert assignment is not None, "the round has no item left for this expert"
    item = Item.objects.get(pk=assignment.item_id)
    return grade_submit(
        item=item,
        expert=expert,
        data=GradeInput.from_data({"score": score, **data}),
        submit_key=f"k-{item.pk}-{expert.pk}",
    )
