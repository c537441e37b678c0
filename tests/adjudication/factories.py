"""Factories for the adjudication tests: campaigns, items and submitted grades (rows written
directly; the detection service is then run as the item_judged receiver runs it)."""

from decimal import Decimal

import factory
from django.utils import timezone

from adjudication.services import item_evaluate
from annotation.models import Campaign, ErrorSpan, Grade, GradeStatus, Item, default_error_taxonomy
from tests.factories import UserFactory
from tests.problems.page_factories import ProofFactory


class CampaignFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Campaign

    slug = factory.Sequence(lambda n: f"campaign-{n}")
    name = factory.Sequence(lambda n: f"Campaign {n}")
    scale = "0-7"
    tolerance = Decimal("1")
    label_policy = "mean_floor"
    error_taxonomy = factory.LazyFunction(default_error_taxonomy)


class ItemFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Item

    campaign = factory.SubFactory(CampaignFactory)
    proof = factory.SubFactory(ProofFactory)
    required_judgements = 2


class GradeFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Grade

    item = factory.SubFactory(ItemFactory)
    expert = factory.SubFactory(UserFactory, roles=["expert"])
    status = GradeStatus.SUBMITTED
    score = Decimal("5")
    seconds_spent = 300
    submitted_at = factory.LazyFunction(timezone.now)


class ErrorSpanFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = ErrorSpan

    grade = factory.SubFactory(GradeFactory)
    start = 0
    end = 5
    quote = factory.LazyAttribute(lambda o: o.grade.item.proof.text[o.start : o.end])
    category = "calculation_mistake"
    note = "wrong"


def judge(item: Item, *scores, experts=None) -> list[Grade]:
    """Submits one grade per score (new experts unless given) and runs detection."""
    experts = experts or [UserFactory(roles=["expert"]) for _ in scores]
    grades = [
        GradeFactory(item=item, expert=expert, score=Decimal(str(score)))
        for expert, score in zip(experts, scores, strict=True)
    ]
    submitted = item.grades.filter(status=GradeStatus.SUBMITTED).count()
    Item.objects.filter(pk=item.pk).update(
        submitted_count=submitted, needs_work=submitted < item.required_judgements
    )
    item_evaluate(item_id=item.pk)
    return grades
