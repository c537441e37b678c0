"""Adding a selection to a campaign: the preview counts exactly what "Create" makes (one item
per analysis in an analysis review, none for what is already in), and says when a choice makes
nothing (issue 36)."""

from decimal import Decimal

import pytest
from django.urls import reverse

from annotation.models import Item
from tests.annotation.factories import CampaignFactory
from tests.factories import UserFactory
from tests.problems.page_factories import ProblemFactory, ProofFactory, VerifierAnalysisFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin():
    return UserFactory(roles=["admin"])


def preview(client, campaign, **selection) -> str:
    url = reverse("annotation:items-create", args=[campaign.slug])
    return client.get(url, selection).content.decode()


def create(client, campaign, **selection):
    url = reverse("annotation:items-create", args=[campaign.slug])
    return client.post(url, selection, follow=True).content.decode()


def test_an_analysis_review_previews_one_item_per_analysis_and_creates_that_many(client, admin):
    campaign = CampaignFactory(task_kind="analysis_review", scale="0-0.5-1", double_share=0)
    analysed = ProblemFactory(contest="PREV", external_id="PREV-1")
    bare = ProblemFactory(contest="PREV", external_id="PREV-2")
    for _ in range(2):
        VerifierAnalysisFactory.create_batch(3, proof=ProofFactory(problem=analysed))
    ProofFactory(problem=bare)
    client.force_login(admin)
    page = preview(client, campaign, contest="PREV")
    assert "<strong>3</strong> proofs match, with <strong>6</strong> verifier analyses" in page
    assert "Create 6 items" in page
    assert "No verifier analysis, so no item, for PREV-2." in page
    create(client, campaign, contest="PREV")
    assert Item.objects.filter(campaign=campaign).count() == 6
    again = preview(client, campaign, contest="PREV")
    assert "6 analyses are already in the campaign" in again
    assert "Every one is already in the campaign: nothing to create." in again
    assert "Create 0 items" not in again


def test_a_problem_with_no_analysis_says_so_and_makes_nothing(client, admin):
    campaign = CampaignFactory(task_kind="analysis_review", scale="0-0.5-1", double_share=0)
    ProofFactory(problem=ProblemFactory(contest="NONE", external_id="NONE-1"))
    client.force_login(admin)
    page = preview(client, campaign, contest="NONE")
    assert "The selected proofs have no verifier analysis: nothing to create." in page
    assert '<button type="submit" class="primary">Create' not in page
    after = create(client, campaign, contest="NONE")
    assert "No item created" in after
    assert not Item.objects.filter(campaign=campaign).exists()


def test_a_grading_campaign_counts_only_the_proofs_not_yet_in_it(client, admin):
    from annotation import services

    campaign = CampaignFactory(double_share=Decimal(0))
    proofs = ProofFactory.create_batch(3, problem=ProblemFactory(contest="GRAD"))
    services.items_create_from_selection(campaign=campaign, proofs=proofs[:1])
    client.force_login(admin)
    page = preview(client, campaign, contest="GRAD")
    assert "<strong>3</strong> proofs match." in page
    assert "1 proof is already in the campaign" in page
    assert "Create 2 items" in page
    create(client, campaign, contest="GRAD")
    assert Item.objects.filter(campaign=campaign).count() == 3
