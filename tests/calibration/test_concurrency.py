"""A requirement set twice at once (a double click on Save) on the real PostgreSQL."""

from decimal import Decimal

import pytest

from calibration.models import CalibrationRequirement
from calibration.services import calibration_requirement_set
from tests.annotation.factories import CampaignFactory, ItemFactory, expert_in
from tests.calibration.factories import gold_round
from tests.rubrics.test_concurrency import run_together

pytestmark = [pytest.mark.django_db(transaction=True)]


def test_a_first_requirement_set_twice_at_once_is_one_requirement():
    campaign = CampaignFactory()
    ItemFactory(campaign=campaign)
    expert = expert_in(campaign)
    round, _ = gold_round([5, 2], experts=[expert])
    errors = run_together(
        lambda i: calibration_requirement_set(
            campaign=campaign,
            round=round,
            max_mae=Decimal(i + 1),
            min_items=1,
            set_by=None,
        ),
        4,
    )
    assert errors == []
    assert CalibrationRequirement.objects.filter(campaign=campaign).count() == 1
