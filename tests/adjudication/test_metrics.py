"""Campaign figures: pairs, bias against final labels, gold deviation, fast grades, weeks."""

from datetime import timedelta
from decimal import Decimal

import krippendorff
import numpy as np
import pytest
from django.utils import timezone

from adjudication.metrics import (
    campaign_agreement,
    campaign_agreement_cached,
    disagreement_rows,
)
from adjudication.models import FinalLabel
from annotation.models import Grade
from tests.adjudication.factories import CampaignFactory, ItemFactory, judge
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_campaign_figures_by_hand():
    campaign = CampaignFactory(fast_seconds=100, double_share=Decimal("1"))
    x, y = UserFactory(username="x", roles=["expert"]), UserFactory(username="y", roles=["expert"])
    items = []
    for scores in [(7, 6), (4, 4), (1, 5)]:
        item = ItemFactory(campaign=campaign)
        judge(item, *scores, experts=[x, y])
        items.append(item)
    # The disputed item is adjudicated at 3; the first one is made gold.
    FinalLabel.objects.create(item=items[2], value=3, scale="0-7", source="adjudication")
    items[0].is_gold = True
    items[0].save()
    Grade.objects.filter(item=items[1], expert=y).update(seconds_spent=20)
    old = timezone.now() - timedelta(days=14)
    Grade.objects.filter(item=items[2]).update(submitted_at=old)

    a = campaign_agreement(campaign, n_resamples=50)
    assert a.is_calibration
    assert a.overall.n == 3
    assert a.overall.values["exact"] == pytest.approx(1 / 3)
    assert a.overall.values["within"] == pytest.approx(2 / 3)
    assert a.overall.values["mad"] == pytest.approx(5 / 3)
    assert [row["experts"] for row in a.pairs] == [("x", "y")]
    experts = {row["name"]: row for row in a.experts}
    # Labels: item 0 agreement mean_floor(7, 6) = 6; item 1 = 4; item 2 adjudicated 3.
    assert experts["x"]["bias"] == pytest.approx(((7 - 6) + 0 + (1 - 3)) / 3)
    assert experts["y"]["bias"] == pytest.approx(((6 - 6) + 0 + (5 - 3)) / 3)
    assert (experts["x"]["gold_n"], experts["x"]["gold_bias"]) == (1, 1.0)
    assert experts["y"]["gold_mad"] == 0.0
    assert experts["y"]["fast"] == 1 and experts["x"]["fast"] == 0
    assert [j.seconds for j in a.fast] == [20]
    assert experts["x"]["distribution"] == [0, 1, 0, 0, 1, 0, 0, 1]
    assert len(a.weeks) == 2
    assert [row["figures"].n for row in a.weeks] == [1, 2]
    # Krippendorff's alpha by week, over that week's items (the krippendorff package as reference)
    second_week = krippendorff.alpha(
        reliability_data=np.array([[7.0, 4.0], [6.0, 4.0]]),
        level_of_measurement="ordinal",
        value_domain=list(range(8)),
    )
    assert a.weeks[1]["alpha"] == pytest.approx(second_week)
    assert a.weeks[0]["alpha"] != a.weeks[1]["alpha"]
    assert sum(map(sum, a.confusion)) == 6
    assert a.confusion[1][5] == a.confusion[5][1] == 1


def test_disagreement_rows_skip_agreeing_items():
    campaign = CampaignFactory()
    judge(ItemFactory(campaign=campaign), 3, 3)
    judge(ItemFactory(campaign=campaign), 3, 4)
    rows = disagreement_rows(campaign)
    assert [(r["difference"], r["beyond_tolerance"], r["final_source"]) for r in rows] == [
        (1.0, False, "agreement")
    ]


def test_cached_figures_follow_new_judgements():
    campaign = CampaignFactory()
    judge(ItemFactory(campaign=campaign), 3, 3)
    first = campaign_agreement_cached(campaign)
    assert campaign_agreement_cached(campaign).overall.n == first.overall.n == 1
    judge(ItemFactory(campaign=campaign), 2, 5)
    assert campaign_agreement_cached(campaign).overall.n == 2
