"""Intervals valid by design, through the services: routing keeps a uniform random share and
records each item's inclusion probability; the score intervals weight by it, cluster by
problem, say what they assume, and say why when no interval can be valid (no random share)."""

import json
from decimal import Decimal

import pytest
from django.urls import reverse

from adjudication.services.labels import final_label_set
from annotation.models import Item, ItemDesign
from annotation.services.items import items_create_from_selection
from estimation.routing.services import (
    RoutingError,
    campaign_rank,
    campaign_routing_set,
    parse_uniform_share,
)
from estimation.services.intervals import campaign_score_intervals
from exports.formats import ExportOptions
from exports.services import dataset_write
from exports.services.datasets import companion_paths
from tests.annotation.factories import CampaignFactory
from tests.factories import UserFactory
from tests.problems.page_factories import ProblemFactory, ProofFactory, VerifierAnalysisFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def campaign():
    """Eight problems of three proofs each, every proof with two verifier scores (some
    split, some unanimous), in a 0-7 campaign."""
    campaign = CampaignFactory(scale="0-7", double_share=Decimal("0"))
    proofs = []
    for p in range(8):
        problem = ProblemFactory()
        for s in range(3):
            proof = ProofFactory(problem=problem)
            first, second = (Decimal(1), Decimal(0)) if (p + s) % 3 == 0 else (Decimal(1),) * 2
            VerifierAnalysisFactory(proof=proof, score=first)
            VerifierAnalysisFactory(proof=proof, score=second)
            proofs.append(proof)
    items_create_from_selection(campaign=campaign, proofs=proofs)
    return campaign


def label_chosen(campaign):
    for n, item in enumerate(Item.objects.filter(campaign=campaign, route_held=False)):
        final_label_set(
            item=item, value=Decimal(n % 8), source="single", policy="test", grade_ids=[]
        )


def test_new_items_are_for_experts_with_probability_one(campaign):
    items = Item.objects.filter(campaign=campaign)
    assert {(i.design, i.inclusion_probability) for i in items} == {(ItemDesign.ALL, 1.0)}


def test_routing_keeps_a_uniform_share_and_records_each_probability(campaign):
    result = campaign_routing_set(
        campaign=campaign, item_order="uncertainty", budget=Decimal("0.25")
    )
    assert campaign.items.first().campaign.routing_uniform_share == Decimal("0.250")
    items = list(Item.objects.filter(campaign=campaign))
    assert (result.served, result.held) == (6, 18)  # a fixed-size draw: the allowance
    probabilities = [i.inclusion_probability for i in items]
    assert all(0 < p <= 1 for p in probabilities)
    assert sum(probabilities) == pytest.approx(6)
    # split verdicts are likelier, but every item can be drawn (a floor from the uniform share)
    assert min(probabilities) >= 0.25 * 6 / 24 - 1e-9
    chosen = [i for i in items if not i.route_held]
    assert {i.design for i in chosen} <= {ItemDesign.UNIFORM, ItemDesign.ROUTED}
    assert {i.design for i in items if i.route_held} == {ItemDesign.NOT_CHOSEN}
    # a new pass draws the same items (permanent random numbers)
    campaign_rank(campaign=campaign)
    again = {i.pk for i in Item.objects.filter(campaign=campaign, route_held=False)}
    assert again == {i.pk for i in chosen}


def test_scores_weight_the_routed_labels_and_say_what_they_assume(campaign):
    campaign_routing_set(campaign=campaign, item_order="uncertainty", budget=Decimal("0.5"))
    label_chosen(campaign)
    (row,) = campaign_score_intervals(campaign=campaign, width=1)
    assert row.expert_labels == 12 and row.human is not None and row.ppi is not None
    assert row.human.low <= row.human.mean <= row.human.high
    assert "1 / its chance of being chosen" in row.human_assumes
    assert "clustered" in row.human_assumes and "lambda" in row.ppi_assumes
    assert row.human.clusters == len(
        {i.proof.problem_id for i in Item.objects.filter(campaign=campaign, route_held=False)}
    )
    assert row.designs[ItemDesign.NOT_CHOSEN] == 12


def test_an_interval_past_an_end_of_the_scale_is_cut_to_it_and_says_so(campaign):
    """Labels piled on the top of 0-7 (one 4 among 7s) make a t interval reaching past 7: it is
    cut to 0-7 (no mean lies outside, so the cut keeps the coverage) and the line says so; an
    interval inside the range is left alone."""
    for n, item in enumerate(Item.objects.filter(campaign=campaign).order_by("pk")):
        value = Decimal(4) if n == 0 else Decimal(7)
        final_label_set(item=item, value=value, source="single", policy="test", grade_ids=[])
    (row,) = campaign_score_intervals(campaign=campaign, width=1)
    assert row.human.clipped and row.human.high == 7.0 and row.human.low < row.human.mean < 7
    assert "Cut to the scale's range 0-7" in row.human_assumes
    assert row.as_dict()["human"]["clipped"] is True
    label_chosen(campaign)  # values 0-7 spread: nothing to cut
    (row,) = campaign_score_intervals(campaign=campaign, width=1)
    assert not row.human.clipped and "Cut to" not in row.human_assumes


def test_clipping_keeps_an_interval_inside_the_range_and_none_as_none():
    from adjudication.estimators import DesignInterval, clipped_to

    inside = DesignInterval(mean=3.0, low=2.0, high=4.0, n=5, sd=1.0, clusters=5)
    assert clipped_to(inside, 0.0, 7.0) is inside
    past = DesignInterval(mean=-0.2, low=-1.0, high=0.6, n=5, sd=1.0, clusters=5, lam=0.5)
    cut = clipped_to(past, 0.0, 7.0)
    assert (cut.mean, cut.low, cut.high, cut.clipped, cut.sd) == (0.0, 0.0, 0.6, True, 1.0)
    assert clipped_to(None, 0.0, 7.0) is None


def test_no_random_share_no_interval_and_the_reason(campaign, client):
    campaign_routing_set(
        campaign=campaign,
        item_order="uncertainty",
        budget=Decimal("0.5"),
        uniform_share=Decimal("0"),
    )
    assert {i.inclusion_probability for i in Item.objects.filter(campaign=campaign)} == {None}
    label_chosen(campaign)
    (row,) = campaign_score_intervals(campaign=campaign, width=1)
    assert row.human is None and row.ppi is None
    assert "no known probability of reaching experts" in row.human_why_not
    client.force_login(UserFactory(roles=["admin"]))
    page = client.get(reverse("exports:scores", args=[campaign.slug])).content.decode()
    assert "No interval: 24 item(s) have no known probability" in page


def test_items_chosen_but_not_labelled_are_named_in_the_assumption(campaign):
    first = Item.objects.filter(campaign=campaign).order_by("pk")[:10]
    for n, item in enumerate(first):
        final_label_set(item=item, value=Decimal(n % 8), source="single", policy="t", grade_ids=[])
    (row,) = campaign_score_intervals(campaign=campaign, width=1)
    assert row.human is not None
    assert "the 14 chosen item(s) not labelled yet are like the labelled ones" in row.human_assumes


def test_api_and_form_take_the_uniform_share(campaign, client, api_client_for):
    admin = UserFactory(roles=["admin"])
    url = reverse("api-routing-set", args=[campaign.slug])
    body = (
        api_client_for(admin)
        .post(
            url,
            {"item_order": "uncertainty", "budget": "50%", "uniform_share": "40%"},
            format="json",
        )
        .json()
    )
    assert body["uniform_share"] == "0.400"
    campaign.refresh_from_db()
    assert campaign.routing_uniform_share == Decimal("0.400")
    bad = api_client_for(admin).post(
        url, {"item_order": "uncertainty", "budget": "50%", "uniform_share": "2"}, format="json"
    )
    assert bad.status_code == 400 and bad.json()["detail"].startswith("uniform_share:")
    client.force_login(admin)
    page = client.post(
        reverse("exports:routing", args=[campaign.slug]),
        {"item_order": "uncertainty", "budget": "50%", "uniform_share": "30%"},
        follow=True,
    )
    assert page.status_code == 200
    campaign.refresh_from_db()
    assert campaign.routing_uniform_share == Decimal("0.300")
    scores = api_client_for(admin).get(reverse("api-score-intervals", args=[campaign.slug]))
    (row,) = scores.json()["generators"]
    assert row["human"] is None and row["human_not_shown_because"].startswith("needs expert")


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("0.25", Decimal("0.250")), ("30%", Decimal("0.300")), ("0", Decimal("0.000")), ("", None)],
)
def test_uniform_share_is_a_share_or_a_percentage(raw, expected):
    assert parse_uniform_share(raw) == expected


@pytest.mark.parametrize("raw", ["-0.1", "1.5", "lots", "150%"])
def test_a_bad_uniform_share_names_the_field(raw):
    with pytest.raises(RoutingError, match="^uniform_share: "):
        parse_uniform_share(raw)


def test_exports_carry_the_design_columns_and_the_card_explains_them(campaign, tmp_path):
    campaign_routing_set(campaign=campaign, item_order="uncertainty", budget=Decimal("0.5"))
    label_chosen(campaign)
    probability = {i.pk: i.inclusion_probability for i in Item.objects.filter(campaign=campaign)}
    for fmt in ("proofbench", "dv"):  # label formats (annotations: the golden files)
        out = tmp_path / f"{fmt}.jsonl"
        dataset_write(
            campaign=campaign, fmt=fmt, file_type="jsonl", options=ExportOptions(), out=out
        )
        rows = [json.loads(line) for line in out.read_text().splitlines()]
        assert rows, fmt
        for row in rows:
            assert row["chosen_by"] in {"uniform", "routed"}
            assert row["inclusion_probability"] == probability[row["item_id"]]
            assert row["double_chosen_by"] == "uniform" and row["double_probability"] == 0.0
        card = companion_paths(out)[1].read_text()
        assert "## Sampling design" in card and "1 / `inclusion_probability`" in card
        assert "| `inclusion_probability` | float |" in card


def test_the_queue_page_shows_how_each_item_was_drawn(campaign, client):
    campaign_routing_set(campaign=campaign, item_order="uncertainty", budget=Decimal("0.25"))
    client.force_login(UserFactory(roles=["admin"]))
    page = client.get(reverse("exports:routing", args=[campaign.slug])).content.decode()
    assert "Chosen by (probability)" in page and "In the routing draw, not chosen" in page
    item = Item.objects.filter(campaign=campaign).order_by("route_rank").first()
    assert f"({item.inclusion_probability:.3f})" in page
