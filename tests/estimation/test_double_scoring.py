"""Adaptive double-scoring (estimation.services.double_scoring) and the agreement figures
weighted by its design (adjudication.metrics.agreement_weights): the second judgements go where
the automatic graders split, every item keeps a positive probability, the figures count each
double-scored item 1 / its probability, and the agreement page says which weighting it used."""

from decimal import Decimal

import numpy as np
import pytest
from django.urls import reverse
from sklearn.metrics import cohen_kappa_score

from adjudication.metrics import campaign_agreement
from annotation.models import DoubleDesign, Grade, Item
from annotation.services.items import items_create_from_selection
from tests.annotation.factories import CampaignFactory
from tests.factories import UserFactory
from tests.problems.page_factories import ProblemFactory, ProofFactory, VerifierAnalysisFactory

pytestmark = pytest.mark.django_db


def proofs(split: int, unanimous: int):
    """`split` proofs whose two verifier scores disagree, then `unanimous` that agree."""
    out = []
    for n in range(split + unanimous):
        proof = ProofFactory(problem=ProblemFactory())
        VerifierAnalysisFactory(proof=proof, score=Decimal(1))
        VerifierAnalysisFactory(proof=proof, score=Decimal(0) if n < split else Decimal(1))
        out.append(proof)
    return out


def test_adaptive_double_scoring_spends_the_share_where_graders_split():
    campaign = CampaignFactory(
        double_share=Decimal("0.25"), double_design="adaptive", double_uniform_share="0.3"
    )
    result = items_create_from_selection(campaign=campaign, proofs=proofs(10, 30))
    assert result.double_scored == 10
    items = list(Item.objects.filter(campaign=campaign).order_by("pk"))
    assert sum(i.required_judgements == 2 for i in items) == 10  # the same budget
    assert {i.double_design for i in items} == {DoubleDesign.ADAPTIVE}
    p = np.array([i.double_probability for i in items])
    assert p.sum() == pytest.approx(10) and p.min() >= 0.3 * 10 / 40 - 1e-9
    assert p[:10].mean() > 2 * p[10:].mean()  # split verdicts: likelier
    doubled = [n for n, i in enumerate(items) if i.required_judgements == 2]
    assert sum(n < 10 for n in doubled) > sum(n >= 10 for n in doubled) / 3


def test_a_uniform_campaign_keeps_its_seeded_sample():
    campaign = CampaignFactory(double_share=Decimal("0.25"))
    items_create_from_selection(campaign=campaign, proofs=proofs(4, 4))
    assert {i.double_design for i in Item.objects.filter(campaign=campaign)} == {"uniform"}


def grade(item, expert, score):
    Grade.objects.create(
        item=item, expert=expert, status="submitted", score=Decimal(score), seconds_spent=90
    )


def test_agreement_is_weighted_by_the_double_scoring_design(client):
    campaign = CampaignFactory(scale="0-7", double_share=Decimal("0"))
    items_create_from_selection(campaign=campaign, proofs=proofs(0, 6), required_judgements=2)
    items = list(Item.objects.filter(campaign=campaign).order_by("pk"))
    probability = [0.5, 0.5, 0.25, 0.25, 1.0, 1.0]
    pairs = [(3, 3), (4, 6), (0, 2), (7, 7), (5, 4), (1, 1)]
    for item, p in zip(items, probability, strict=True):
        item.double_design, item.double_probability = DoubleDesign.ADAPTIVE, p
        item.save()
    first, second = UserFactory(roles=["expert"]), UserFactory(roles=["expert"])
    for item, (a, b) in zip(items, pairs, strict=True):
        grade(item, first, a)
        grade(item, second, b)
    found = campaign_agreement(campaign, n_resamples=50)
    weights = [1 / p for p in probability]
    a, b = [x for x, _ in pairs], [y for _, y in pairs]
    kappa = cohen_kappa_score(
        a, b, labels=list(range(8)), weights="quadratic", sample_weight=weights
    )
    assert found.weighted and found.overall.values["kappa"] == pytest.approx(kappa, abs=1e-12)
    exact = sum(w for w, (x, y) in zip(weights, pairs, strict=True) if x == y) / sum(weights)
    assert found.overall.values["exact"] == pytest.approx(exact)
    assert "Weighted by the design" in found.weighting
    client.force_login(UserFactory(roles=["admin"]))
    page = client.get(reverse("adjudication:dashboard", args=[campaign.slug])).content.decode()
    assert 'id="agreement-weighting"' in page and "1 / its probability" in page


def test_equal_probabilities_are_unweighted_and_unknown_ones_are_named():
    campaign = CampaignFactory(scale="0-7", double_share=Decimal("0"))
    items_create_from_selection(campaign=campaign, proofs=proofs(0, 3), required_judgements=2)
    first, second = UserFactory(roles=["expert"]), UserFactory(roles=["expert"])
    for n, item in enumerate(Item.objects.filter(campaign=campaign)):
        grade(item, first, n)
        grade(item, second, n + 1)
    found = campaign_agreement(campaign, n_resamples=20)
    assert not found.weighted and "same probability" in found.weighting
    Item.objects.filter(campaign=campaign).update(double_probability=None)
    found = campaign_agreement(campaign, n_resamples=20)
    assert not found.weighted and "3 double-scored item(s) have no known" in found.weighting


def test_the_figures_per_pair_and_per_week_are_weighted_by_the_design_too():
    """Each pair's and each week's figures are Hajek estimates over their own items (1 / each
    item's probability of being double-scored), checked against scikit-learn's weighted kappa;
    the words say so."""
    from datetime import timedelta

    from django.utils import timezone

    campaign = CampaignFactory(scale="0-7", double_share=Decimal("0"))
    items_create_from_selection(campaign=campaign, proofs=proofs(0, 8), required_judgements=2)
    items = list(Item.objects.filter(campaign=campaign).order_by("pk"))
    probability = [0.5, 0.25, 1.0, 0.2, 0.5, 0.25, 1.0, 0.4]
    scores = [(3, 3), (4, 6), (0, 2), (7, 7), (5, 4), (1, 1), (2, 5), (6, 6)]
    for item, p in zip(items, probability, strict=True):
        item.double_design, item.double_probability = DoubleDesign.ADAPTIVE, p
        item.save()
    a, b, c = (UserFactory(roles=["expert"], username=n) for n in ("ann", "bob", "cyd"))
    late = timezone.now()
    early = late - timedelta(days=14)
    for n, (item, (x, y)) in enumerate(zip(items, scores, strict=True)):
        grade(item, a, x)
        grade(item, b if n < 5 else c, y)  # pair ann-bob on items 0-4, ann-cyd on 5-7
        # the even items judged two weeks before the odd ones
        Grade.objects.filter(item=item).update(submitted_at=early if n % 2 == 0 else late)
    found = campaign_agreement(campaign, n_resamples=20)
    assert found.weighted and "per pair of experts and per week are weighted" in found.weighting

    def kappa(rows):
        return cohen_kappa_score(
            [scores[n][0] for n in rows],
            [scores[n][1] for n in rows],
            labels=list(range(8)),
            weights="quadratic",
            sample_weight=[1 / probability[n] for n in rows],
        )

    def exact(rows):
        weight = [1 / probability[n] for n in rows]
        hits = [w for w, n in zip(weight, rows, strict=True) if scores[n][0] == scores[n][1]]
        return sum(hits) / sum(weight)

    pairs = {row["experts"]: row["figures"] for row in found.pairs}
    for key, rows in ((("ann", "bob"), range(5)), (("ann", "cyd"), range(5, 8))):
        assert pairs[key].values["exact"] == pytest.approx(exact(list(rows)))
        assert pairs[key].values["kappa"] == pytest.approx(kappa(list(rows)), abs=1e-12)
    early_week, late_week = found.weeks
    assert early_week["figures"].values["exact"] == pytest.approx(exact([0, 2, 4, 6]))
    assert late_week["figures"].values["kappa"] == pytest.approx(kappa([1, 3, 5, 7]), abs=1e-12)
    unweighted = sum(scores[n][0] == scores[n][1] for n in (0, 2, 4, 6)) / 4
    assert early_week["figures"].values["exact"] != pytest.approx(unweighted)
