"""Routing expert effort by uncertainty (estimation/routing/services.py): ranking from the stored
evidence, the order of the real next-item path, the budget with the labelling loop's labels,
the loop's routed proofs entering the queue, the export columns, the API and the page."""

import json
from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from adjudication.models import FinalLabel, LabellingOutcome, LabellingRun, MetaVerification
from adjudication.services.labels import final_label_set
from adjudication.verification import labelling
from annotation.models import Assignment, Item
from annotation.services.assignment import assignment_next
from annotation.services.grade_checks import (
    GradeInput,
)
from annotation.services.grading import (
    grade_submit,
)
from estimation.routing.services import (
    RoutingError,
    campaign_rank,
    campaign_routing_set,
    parse_budget,
    uncertainty_by_proof,
)
from exports.formats import ExportOptions
from exports.services import dataset_write
from graders.models import GraderEvaluation, GraderPrediction
from problems.models import Proof
from problems.services.corpus import corpus_import
from tests.annotation.factories import CampaignFactory, ItemFactory, expert_in
from tests.factories import UserFactory
from tests.metaverify import replies
from tests.problems.page_factories import ProofFactory, VerifierAnalysisFactory
from tests.rubrics.generation_factories import LLMEndpointFactory

pytestmark = pytest.mark.django_db


def scored(proof, *scores, metas=()):
    """Stores the proof's verifier analyses; `metas[i]` are the meta scores of analysis i."""
    analyses = [VerifierAnalysisFactory(proof=proof, score=s) for s in scores]
    for analysis, meta_scores in zip(analyses, metas, strict=False):
        for i, score in enumerate(meta_scores):
            MetaVerification.objects.create(
                analysis=analysis,
                verifier="meta-v",
                sample_key=f"m{i}",
                text="m",
                score=score,
                kept_contract=True,
            )
    return analyses


@pytest.fixture
def campaign():
    """A 0 / 0.5 / 1 campaign of four items: certain, split, invalidated, no evidence; routing
    with no uniform share (the most uncertain first: the ranking's own tests; the random
    design: tests/estimation/test_design.py)."""
    campaign = CampaignFactory(
        scale="0-0.5-1", double_share=Decimal("0"), routing_uniform_share=Decimal("0")
    )
    items = {name: ItemFactory(campaign=campaign) for name in ("sure", "split", "undone", "none")}
    scored(items["sure"].proof, Decimal("1"), Decimal("1"), Decimal("1"))
    scored(items["split"].proof, Decimal("0"), Decimal("1"), Decimal("0.5"))
    # unanimous 0, but every meta-verification rejects the analyses' claimed defects
    scored(
        items["undone"].proof,
        Decimal("0"),
        Decimal("0"),
        metas=[[Decimal("0"), Decimal("0")], [Decimal("0")]],
    )
    campaign.items_by_name = items
    return campaign


def ranks(campaign):
    return {
        name: Item.objects.get(pk=item.pk).route_rank
        for name, item in campaign.items_by_name.items()
    }


def test_ranking_orders_by_uncertainty_and_keeps_the_components(campaign):
    result = campaign_routing_set(campaign=campaign, item_order="uncertainty", budget=None)
    assert (result.ranked, result.served, result.held) == (4, 4, 0)
    assert ranks(campaign) == {"none": 1, "split": 2, "undone": 3, "sure": 4}
    split = Item.objects.get(pk=campaign.items_by_name["split"].pk)
    assert split.route_uncertainty == pytest.approx(0.8165, abs=1e-4)
    assert split.route_components["verifier_scores"] == 3
    assert split.route_ranked_at is not None
    undone = Item.objects.get(pk=campaign.items_by_name["undone"].pk)
    assert undone.route_components["invalidation"] == 1.0
    assert undone.route_uncertainty == pytest.approx(0.5)  # spread 0, invalidation 1


def test_grader_predictions_of_the_proof_count_as_disagreement(campaign):
    sure = campaign.items_by_name["sure"]
    evaluation = GraderEvaluation.objects.create(campaign=campaign, name="g", source="jsonl")
    for run, score in enumerate((0.0, 7.0)):
        GraderPrediction.objects.create(
            evaluation=evaluation, item=sure, run_index=run, score=score
        )
    found = uncertainty_by_proof([sure.proof_id])[sure.proof_id]
    assert found.disagreement == 1.0 and found.predictions == 2
    assert found.value == pytest.approx(0.5)


def test_gathering_the_evidence_takes_four_queries_whatever_the_number_of_proofs(campaign):
    for _ in range(5):
        scored(ItemFactory(campaign=campaign).proof, Decimal("1"), Decimal("0"), metas=[[], [1]])
    ids = list(campaign.items.values_list("proof_id", flat=True))
    with CaptureQueriesContext(connection) as queries:
        found = uncertainty_by_proof(ids)
    assert len(found) == 9 and len(queries) == 4


def test_the_real_deepseek_proofs_are_ranked_by_their_imported_automatic_ratings(real_fixtures):
    """Their datasets ship one mean automatic rating per proof and no analysis: before, every
    one had uncertainty 1 and the order fell back to ids."""
    corpus_import(path=real_fixtures / "deepseek_math_v2")
    campaign = CampaignFactory(scale="0-7", double_share=Decimal("0"))
    for proof in Proof.objects.order_by("pk"):
        ItemFactory(campaign=campaign, proof=proof)
    campaign_routing_set(campaign=campaign, item_order="uncertainty", budget=None)
    ranked = list(
        Item.objects.filter(campaign=campaign)
        .order_by("route_rank")
        .values_list("proof__metadata", "route_uncertainty", "route_components")
    )
    assert len(ranked) == 6
    means = []
    for metadata, uncertainty, components in ranked:
        (rating,) = [r for r in metadata["imported_ratings"] if r["kind"] == "automatic"]
        means.append(rating["value"])
        assert components["ratings"] == 1
        assert uncertainty == pytest.approx(2 * (rating["value"] * (1 - rating["value"])) ** 0.5)
    assert min(u for _, u, _ in ranked) == 0.0  # a unanimous rating (0 or 1) is sure
    # nearest to 0.5 first
    assert [abs(m - 0.5) for m in means] == sorted(abs(m - 0.5) for m in means)


def test_next_item_follows_the_rank_and_the_created_order_otherwise(campaign):
    experts = [expert_in(campaign) for _ in range(4)]
    created = [assignment_next(campaign=campaign, expert=e).item_id for e in experts[:2]]
    assert created == [campaign.items_by_name["sure"].pk, campaign.items_by_name["split"].pk]
    Assignment.objects.all().delete()
    campaign_routing_set(campaign=campaign, item_order="uncertainty", budget=None)
    campaign.refresh_from_db()  # as every request reads it
    served = [assignment_next(campaign=campaign, expert=e).item_id for e in experts]
    by_name = {item.pk: name for name, item in campaign.items_by_name.items()}
    assert [by_name[pk] for pk in served] == ["none", "split", "undone", "sure"]


def loop_labelled(proof, label):
    endpoint = LLMEndpointFactory()
    run = LabellingRun.objects.create(
        proof_ids=[proof.pk],
        verifier=endpoint,
        meta_verifier=endpoint,
        auto_campaign=CampaignFactory(scale="0-0.5-1"),
    )
    return LabellingOutcome.objects.create(
        run=run, proof=proof, status="succeeded", decision="labelled", label=label
    )


def test_budget_serves_the_most_uncertain_and_labels_the_rest_where_the_loop_is_confident(
    campaign,
):
    sure = campaign.items_by_name["sure"]
    loop_labelled(sure.proof, Decimal("1"))
    result = campaign_routing_set(
        campaign=campaign, item_order="uncertainty", budget=Decimal("0.5")
    )
    assert (result.allowance, result.served, result.held, result.auto_labelled) == (2, 2, 2, 1)
    label = FinalLabel.objects.get(item=sure)
    assert (label.source, label.value) == ("automatic", Decimal("1"))
    assert "rank 4 of 4" in label.policy and "run" in label.policy
    campaign.refresh_from_db()
    undone = Item.objects.get(pk=campaign.items_by_name["undone"].pk)
    assert undone.route_held and not undone.is_final  # no confident loop label: held
    experts = [expert_in(campaign) for _ in range(3)]
    served = [assignment_next(campaign=campaign, expert=e) for e in experts]
    assert [a and a.item_id for a in served] == [
        campaign.items_by_name["none"].pk,
        campaign.items_by_name["split"].pk,
        None,  # the held and the auto-labelled items are never served
    ]
    # the dashboard counts the two held items apart from the waiting ones
    from annotation.selectors import campaign_progress

    progress = campaign_progress(campaign)
    assert (progress.items, progress.in_progress, progress.held, progress.waiting) == (4, 2, 2, 0)
    # items already given to experts use up the allowance: ranking again holds the same
    again = campaign_rank(campaign=campaign)
    assert (again.already_given, again.ranked, again.served, again.held) == (2, 1, 0, 1)
    # raising the budget releases the held item
    campaign_routing_set(campaign=campaign, item_order="uncertainty", budget=Decimal("1"))
    campaign.refresh_from_db()
    assert assignment_next(campaign=campaign, expert=experts[2]).item_id == undone.pk


def test_loop_labels_are_not_copied_onto_another_scale():
    campaign = CampaignFactory(scale="0-7", routing_uniform_share=Decimal("0"))
    item = ItemFactory(campaign=campaign)
    ItemFactory(campaign=campaign)  # no evidence: ranked first
    scored(item.proof, Decimal("1"), Decimal("1"))
    loop_labelled(item.proof, Decimal("1"))
    result = campaign_routing_set(
        campaign=campaign, item_order="uncertainty", budget=Decimal("0.5")
    )
    assert (result.held, result.auto_labelled) == (1, 0)
    assert not FinalLabel.objects.exists()


def test_back_to_the_created_order_releases_held_items(campaign):
    campaign_routing_set(campaign=campaign, item_order="uncertainty", budget=Decimal("0.25"))
    assert campaign.items.filter(route_held=True).count() == 3
    assert campaign_routing_set(campaign=campaign, item_order="created", budget=None) is None
    assert not campaign.items.filter(route_held=True).exists()


@pytest.mark.parametrize(
    "raw, expected",
    [("30%", Decimal("0.3")), ("0.25", Decimal("0.25")), ("", None), (None, None)],
)
def test_budget_is_a_share_or_a_percentage(raw, expected):
    assert parse_budget(raw) == expected


@pytest.mark.parametrize("raw", ["0", "150%", "1.5", "lots", "-0.2", "NaN"])
def test_a_bad_budget_names_the_field(raw):
    with pytest.raises(RoutingError, match="^budget: "):
        parse_budget(raw)


def test_a_budget_needs_the_uncertainty_order(campaign):
    with pytest.raises(RoutingError, match="^budget: "):
        campaign_routing_set(campaign=campaign, item_order="created", budget=Decimal("0.5"))


@pytest.fixture
def endpoints(fake_llm, settings):
    settings.LLM_BACKOFF_SECONDS = 0
    verifier = LLMEndpointFactory(base_url=fake_llm.base_url, model="verifier-x", api_key_env="")
    meta = LLMEndpointFactory(base_url=fake_llm.base_url, model="meta-x", api_key_env="")
    return verifier, meta


def test_the_loops_routed_proofs_enter_the_queue_ranked_by_their_uncertainty(
    fake_llm, endpoints, campaign
):
    verifier, meta = endpoints
    campaign_routing_set(campaign=campaign, item_order="uncertainty", budget=None)
    unsure = ProofFactory(text="Proof unsure: by induction on $n$ the claim holds.")
    gap = replies.analysis("0.5", "Unsure: step 2 skips a case.")
    replies.script_proof(fake_llm, unsure, gap, replies.CLEAN)
    replies.script_meta(fake_llm, "Unsure: step 2", replies.CONFIRM)
    run = labelling.labelling_run_start(
        proofs=[unsure],
        verifier=verifier,
        meta_verifier=meta,
        n=2,
        m=1,
        k=2,
        route_campaign=campaign,
        user=UserFactory(roles=["admin"]),
    )
    outcome = labelling.labelling_outcome_execute(outcome_id=run.outcomes.get().pk)
    assert outcome.decision == "routed"
    routed = Item.objects.get(pk=outcome.item_id)
    # scores 0.5 and 1 (spread 0.5), the 0.5 confirmed (invalidation 0): uncertainty 0.25,
    # between "undone" (0.5) and "sure" (0)
    assert routed.route_uncertainty == pytest.approx(0.25)
    assert routed.route_rank == 4
    assert ranks(campaign)["sure"] == 5


def test_exports_carry_the_rank_and_uncertainty(campaign, tmp_path):
    campaign_routing_set(campaign=campaign, item_order="uncertainty", budget=None)
    campaign.refresh_from_db()
    split = campaign.items_by_name["split"]
    expert = expert_in(campaign)
    assignment = assignment_next(campaign=campaign, expert=expert)
    assert assignment.item_id == campaign.items_by_name["none"].pk
    grade_submit(
        item=assignment.item,
        expert=expert,
        data=GradeInput(score=Decimal("0.5"), seconds_spent=90),
    )
    final_label_set(item=split, value=Decimal("0"), source="imported", policy="test", grade_ids=[])
    rows = {}
    for fmt in ("annotations", "dv"):
        out = tmp_path / f"{fmt}.jsonl"
        dataset_write(
            campaign=campaign, fmt=fmt, file_type="jsonl", options=ExportOptions(), out=out
        )
        rows[fmt] = [json.loads(line) for line in out.read_text().splitlines()]
    (graded,) = rows["annotations"]
    assert (graded["route_rank"], graded["route_uncertainty"]) == (1, 1.0)
    assert graded["route_components"]["verifier_scores"] == 0
    by_rank = {row["route_rank"]: row for row in rows["dv"]}
    assert by_rank[2]["route_uncertainty"] == pytest.approx(0.8165, abs=1e-4)
    assert by_rank[1]["label_source"] == "single"


def test_api_sets_ranks_and_reads_the_queue(campaign, api_client_for):
    admin = UserFactory(roles=["admin"])
    client = api_client_for(admin)
    url = reverse("api-routing-set", args=[campaign.slug])
    response = client.post(url, {"item_order": "uncertainty", "budget": "50%"}, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["budget"] == "0.500" and body["rank_pass"]["held"] == 2
    queue = client.get(reverse("api-routing-queue", args=[campaign.slug])).json()
    assert queue["count"] == 4
    assert [row["rank"] for row in queue["items"]] == [1, 2, 3, 4]
    assert queue["items"][0]["components"]["verifier_scores"] == 0
    assert [row["held"] for row in queue["items"]] == [False, False, True, True]
    rank = client.post(reverse("api-routing-rank", args=[campaign.slug]))
    assert rank.status_code == 200 and rank.json()["ranked"] == 4
    bad = client.post(url, {"item_order": "uncertainty", "budget": "200%"}, format="json")
    assert bad.status_code == 400 and bad.json()["detail"].startswith("budget:")
    bad = client.post(url, {"item_order": "sideways"}, format="json")
    assert bad.status_code == 400 and "item_order" in bad.json()
    expert = expert_in(campaign)
    assert (
        api_client_for(expert).get(reverse("api-routing-queue", args=[campaign.slug])).status_code
        == 403
    )


def test_rank_api_refuses_a_campaign_in_the_created_order(campaign, api_client_for):
    client = api_client_for(UserFactory(roles=["admin"]))
    response = client.post(reverse("api-routing-rank", args=[campaign.slug]))
    assert response.status_code == 400 and response.json()["detail"].startswith("item_order:")


def test_page_saves_ranks_and_shows_the_queue_in_constant_queries(campaign, client):
    admin = UserFactory(roles=["admin"])
    client.force_login(admin)
    url = reverse("exports:routing", args=[campaign.slug])
    response = client.post(url, {"item_order": "uncertainty", "budget": "lots"})
    assert response.status_code == 400 and "is not a number" in response.content.decode()
    response = client.post(url, {"item_order": "uncertainty", "budget": "75%"}, follow=True)
    page = response.content.decode()
    assert "Ranked 4 item(s): 3 for experts, 1 held" in page
    assert "held (beyond budget)" in page and "0.816" in page

    def queries():
        with CaptureQueriesContext(connection) as captured:
            assert client.get(url).status_code == 200
        return len(captured)

    few = queries()
    for _ in range(6):
        scored(ItemFactory(campaign=campaign).proof, Decimal("1"))
    campaign_rank(campaign=campaign)
    assert queries() == few
    fragment = client.get(url, headers={"HX-Request": "true"})
    assert "<h1>" not in fragment.content.decode() and "routing-queue-table" in (
        fragment.content.decode()
    )
    assert "HX-Request" in fragment["Vary"]
    client.force_login(expert_in(campaign))
    assert client.get(url).status_code == 403


def test_a_held_proof_takes_the_label_when_the_loop_labels_it_later(
    fake_llm, endpoints, campaign, django_capture_on_commit_callbacks
):
    verifier, meta = endpoints
    campaign_routing_set(campaign=campaign, item_order="uncertainty", budget=Decimal("0.5"))
    sure = Item.objects.get(pk=campaign.items_by_name["sure"].pk)
    assert sure.route_held and not sure.is_final
    replies.script_proof(fake_llm, sure.proof, replies.CLEAN)
    run = labelling.labelling_run_start(
        proofs=[sure.proof], verifier=verifier, meta_verifier=meta, n=1, m=1, k=1, user=None
    )
    with django_capture_on_commit_callbacks(execute=True):
        outcome = labelling.labelling_outcome_execute(outcome_id=run.outcomes.get().pk)
    assert outcome.decision == "labelled"
    label = FinalLabel.objects.get(item=sure)
    assert (label.source, label.value) == ("automatic", Decimal("1"))
    assert f"run {run.pk}" in label.policy
    # the still-held item without a loop label is left as it was
    assert not FinalLabel.objects.filter(item=campaign.items_by_name["undone"]).exists()


def test_queue_api_reads_in_constant_queries(campaign, api_client_for):
    client = api_client_for(UserFactory(roles=["admin"]))
    campaign_routing_set(campaign=campaign, item_order="uncertainty", budget=None)
    url = reverse("api-routing-queue", args=[campaign.slug])

    def queries():
        with CaptureQueriesContext(connection) as captured:
            assert client.get(url).status_code == 200
        return len(captured)

    few = queries()
    for _ in range(5):
        scored(ItemFactory(campaign=campaign).proof, Decimal("0.5"), Decimal("1"))
    campaign_rank(campaign=campaign)
    assert campaign.items.filter(route_rank__isnull=False).count() == 9
    assert queries() == few


def test_an_analysis_review_campaign_never_takes_the_loops_proof_labels():
    campaign = CampaignFactory(scale="0-0.5-1", task_kind="analysis_review")
    analyses = scored(ProofFactory(), Decimal("1"), Decimal("0"))
    for analysis in analyses:
        ItemFactory(campaign=campaign, proof=analysis.proof, analysis=analysis, scheme=None)
    loop_labelled(analyses[0].proof, Decimal("1"))
    result = campaign_routing_set(
        campaign=campaign, item_order="uncertainty", budget=Decimal("0.5")
    )
    assert (result.served, result.held, result.auto_labelled) == (1, 1, 0)
    assert not FinalLabel.objects.exists()
