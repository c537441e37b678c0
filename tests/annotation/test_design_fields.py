"""The sampling design recorded on items at their creation (annotation.services.items): every
created item is for experts with probability 1 (gold as gold); its double-scoring is the
seeded sample (probability k / n) or fixed by hand (1 or 0); the campaign's double design and
its uniform part are settings, refused by name when out of range."""

from decimal import Decimal

import pytest

from annotation.models import DoubleDesign, Item, ItemDesign
from annotation.services import CampaignError, campaign_create, campaign_update
from annotation.services.items import items_create_from_selection
from tests.annotation.factories import CampaignFactory
from tests.problems.page_factories import ProofFactory

pytestmark = pytest.mark.django_db


def test_items_record_their_design_and_double_scoring_probability():
    campaign = CampaignFactory(double_share=Decimal("0.4"))
    result = items_create_from_selection(
        campaign=campaign, proofs=[ProofFactory() for _ in range(10)]
    )
    assert result.double_scored == 4
    items = Item.objects.filter(campaign=campaign)
    assert {(i.design, i.inclusion_probability) for i in items} == {(ItemDesign.ALL, 1.0)}
    assert {(i.double_design, i.double_probability) for i in items} == {(DoubleDesign.UNIFORM, 0.4)}


def test_fixed_judgements_and_gold_items_say_so():
    campaign = CampaignFactory(double_share=Decimal("0.4"))
    items_create_from_selection(
        campaign=campaign, proofs=[ProofFactory()], required_judgements=2, is_gold=True
    )
    items_create_from_selection(campaign=campaign, proofs=[ProofFactory()], required_judgements=1)
    gold, single = Item.objects.filter(campaign=campaign).order_by("pk")
    assert (gold.design, gold.double_design, gold.double_probability) == (
        ItemDesign.GOLD,
        DoubleDesign.FIXED,
        1.0,
    )
    assert (single.design, single.double_probability) == (ItemDesign.ALL, 0.0)


def test_double_design_is_a_setting_with_a_uniform_part_kept():
    campaign = campaign_create(
        name="Adaptive",
        created_by=None,
        double_design="adaptive",
        double_uniform_share=Decimal("0.2"),
    )
    assert (campaign.double_design, campaign.double_uniform_share) == ("adaptive", Decimal("0.2"))
    with pytest.raises(CampaignError, match="^double_uniform_share: "):
        campaign_update(campaign=campaign, double_uniform_share=Decimal("0"))
    with pytest.raises(CampaignError, match="^double_design: "):
        campaign_update(campaign=campaign, double_design="clever")
