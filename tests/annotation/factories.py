"""Factories of the annotation app: campaigns, members, items (with an approved scheme)."""

import factory

from annotation.models import Campaign, CampaignMember, Item
from rubrics.models import MarkingScheme
from rubrics.structure import parse_scheme
from tests.factories import UserFactory
from tests.problems.page_factories import ProofFactory

SCHEME_TEXT = """\
## Checkpoints (7 pts total)

**Chain A**
1. **Set-up** (2 pts): reduce to the key inequality. [additive]
2. **Main bound** (3 pts): prove the bound. [additive]
3. **Equality** (2 pts): identify the equality case. [additive]

## Zero-credit items
- Stating the answer without proof.

## Deductions
- Arithmetic slip that does not affect the logic: -1
- Circular argument in the main bound: cap at 3/7
"""


def approved_scheme(problem, text: str = SCHEME_TEXT) -> MarkingScheme:
    scheme, messages = parse_scheme(text, "proofbench_markdown")
    return MarkingScheme.objects.create(
        problem=problem,
        version=MarkingScheme.objects.filter(problem=problem).count() + 1,
        method="manual",
        status="approved",
        text=text,
        structure=scheme.to_dict() if scheme else {},
        is_valid=True,
    )


class CampaignFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Campaign

    slug = factory.Sequence(lambda n: f"campaign-{n}")
    name = factory.Sequence(lambda n: f"Campaign {n}")
    created_by = factory.SubFactory(UserFactory, roles=["admin"])


class CampaignMemberFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = CampaignMember

    campaign = factory.SubFactory(CampaignFactory)
    user = factory.SubFactory(UserFactory, roles=["expert"])
    role = "expert"


class ItemFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Item

    campaign = factory.SubFactory(CampaignFactory)
    proof = factory.SubFactory(ProofFactory)
    required_judgements = 1

    @factory.lazy_attribute
    def scheme(self):
        return approved_scheme(self.proof.problem)


def expert_in(campaign, username: str | None = None):
    """A user with the expert group and an expert membership of `campaign`."""
    kwargs = {"username": username} if username else {}
    user = UserFactory(roles=["expert"], **kwargs)
    CampaignMember.objects.create(campaign=campaign, user=user, role="expert")
    return user


def created_items(result) -> list[Item]:
    """The items an `ItemsCreated` names by id, in creation order."""
    return list(Item.objects.filter(pk__in=result.created_ids).order_by("pk"))
