"""Verification pages and API, the analysis review page and its endpoints, the meta-review
API: roles, query counts, blindness, validation in words."""

import re
from decimal import Decimal

import pytest
from django.urls import reverse

from adjudication.models import LabellingRun, VerifierRun
from adjudication.verification import labelling
from annotation import services
from annotation.models import MetaReview
from annotation.services.review import MetaReviewInput, meta_review_submit
from core.api import RunStatusOutput
from tests.annotation.factories import CampaignFactory
from tests.factories import UserFactory
from tests.metaverify import replies
from tests.metaverify.factories import ANALYSIS_TEXT, analysis_item, defect, expert_in
from tests.problems.page_factories import ProofFactory, VerifierAnalysisFactory
from tests.rubrics.generation_factories import LLMEndpointFactory

pytestmark = pytest.mark.django_db

GAP = "Step 2 divides by x without checking that x is nonzero."


@pytest.fixture
def admin():
    return UserFactory(roles=["admin"])


def _assigned(item, username=None):
    expert = expert_in(item.campaign, username)
    services.assignment_create_manual(item=item, expert=expert, assigned_by=None)
    return expert


def test_review_page_shows_problem_proof_analysis_scope_and_keys(
    client, django_assert_max_num_queries
):
    item = analysis_item()
    expert = _assigned(item)
    client.force_login(expert)
    with django_assert_max_num_queries(16):
        response = client.get(reverse("annotation:item", args=[item.pk]))
    page = response.content.decode()
    assert response.status_code == 200
    for needle in (
        'id="analysis-text"',
        'id="proof-text"',
        "Judge only the defects the analysis claims",
        "Any unreasonable defect: 0 if every claimed defect is unreasonable",
        "<kbd>d</kbd> split out the selected analysis text",
        "js/review.js",
        "js/source-align.js",
        "select a passage, then <kbd>l</kbd> to link it to the focused defect",
        "· analysis review",
        item.proof.problem.external_id,
    ):
        assert needle in page, needle
    assert 'id="span-popup"' not in page


def test_review_endpoints_autosave_and_submit(client, django_capture_on_commit_callbacks):
    item = analysis_item()
    expert = _assigned(item)
    client.force_login(expert)
    draft = client.put(
        reverse("api-review-draft", args=[item.pk]),
        {"defects": [defect(ANALYSIS_TEXT, GAP, exists=True)]},
        content_type="application/json",
    )
    assert draft.status_code == 200 and draft.json()["defects"][0]["exists"] is True
    refused = client.post(
        reverse("api-review-submit", args=[item.pk]),
        {"defects": [defect(ANALYSIS_TEXT, GAP, exists=True)]},
        content_type="application/json",
    )
    assert refused.status_code == 400
    assert (
        "defect 1: say whether the analysis describes it accurately" in refused.json()["problems"]
    )
    with django_capture_on_commit_callbacks(execute=True):
        done = client.post(
            reverse("api-review-submit", args=[item.pk]),
            {"defects": [defect(ANALYSIS_TEXT, GAP, exists=True, accurate=False)]},
            content_type="application/json",
        )
    assert done.status_code == 200 and done.json()["score"] == "0"
    assert item.final_label.value == Decimal("0")
    submit = reverse("api-review-submit", args=[item.pk])
    same = {"defects": [defect(ANALYSIS_TEXT, GAP, exists=True, accurate=False)]}
    repeat = client.post(submit, same, content_type="application/json")
    assert repeat.status_code == 200 and repeat.json() == done.json()
    other = {"defects": [defect(ANALYSIS_TEXT, GAP, exists=False)]}
    stale_tab = client.post(submit, other, content_type="application/json")
    assert stale_tab.status_code == 409 and stale_tab.json()["grade"]["score"] == "0.00"
    assert "Already submitted as 0" in stale_tab.json()["detail"]


def test_another_expert_cannot_reach_the_review_page_or_endpoints(client):
    item = analysis_item()
    _assigned(item)
    client.force_login(UserFactory(roles=["expert"]))
    assert client.get(reverse("annotation:item", args=[item.pk])).status_code == 404
    response = client.put(
        reverse("api-review-draft", args=[item.pk]), {}, content_type="application/json"
    )
    assert response.status_code == 404


def test_meta_review_api_submit_and_list_respects_blindness(api_client_for):
    item = analysis_item(required_judgements=2)
    a, b = _assigned(item, "api-a"), _assigned(item, "api-b")
    api_a = api_client_for(a)
    response = api_a.post(
        reverse("api-review-submit", args=[item.pk]),
        {"expression_error": False, "score_fits": False},
        format="json",
    )
    assert response.status_code == 200 and response.json()["score"] == "0.5"
    url = reverse("api-review-submit", args=[item.pk])
    again = api_a.post(url, {"expression_error": False, "score_fits": False}, format="json")
    assert again.json()["id"] == response.json()["id"]
    assert api_a.post(url, {}, format="json").status_code == 409  # not the review submitted
    assert api_client_for(b).get(reverse("api-meta-reviews")).json()["count"] == 0
    researcher = api_client_for(UserFactory(roles=["researcher"]))
    assert researcher.get(reverse("api-meta-reviews")).json()["count"] == 0
    admin = api_client_for(UserFactory(roles=["admin"]))
    listed = admin.get(reverse("api-meta-reviews"), {"campaign": item.campaign.slug}).json()
    assert listed["count"] == 1 and listed["results"][0]["expert"] == "api-a"
    bad = api_client_for(b).post(
        reverse("api-review-submit", args=[item.pk]),
        {"override": "1", "expression_error": False, "score_fits": True},
        format="json",
    )
    assert bad.status_code == 400
    assert "override: give the reason" in bad.json()["problems"][0]


def test_verification_page_is_for_admins_and_starts_runs(
    client, admin, django_capture_on_commit_callbacks
):
    endpoint = LLMEndpointFactory(name="verifier-ep")
    meta = LLMEndpointFactory(name="meta-ep")
    proofs = ProofFactory.create_batch(2, problem__contest="TESTCONTEST")
    client.force_login(UserFactory(roles=["expert"]))
    assert client.get(reverse("adjudication:verification")).status_code == 403
    client.force_login(admin)
    page = client.get(reverse("adjudication:verification")).content.decode()
    assert "Automated labelling loop" in page and 'href="/adjudication/verification/"' in page
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = client.post(
            reverse("adjudication:labelling-run-create"),
            {"contest": "TESTCONTEST", "verifier": endpoint.pk, "meta_verifier": meta.pk,
             "n": 3, "m": 2, "k": 2, "confirm_at": "1"},
        )  # fmt: skip
    run = LabellingRun.objects.get()
    assert response.status_code == 302 and len(callbacks) == 1
    assert sorted(run.proof_ids) == sorted(p.pk for p in proofs)
    refused = client.post(
        reverse("adjudication:labelling-run-create"),
        {"contest": "TESTCONTEST", "verifier": endpoint.pk, "meta_verifier": meta.pk,
         "n": 1, "m": 1, "k": 2, "confirm_at": "1"},
    )  # fmt: skip
    assert refused.status_code == 400
    assert "k: 2 valid analyses can never be found among n = 1" in refused.content.decode()
    response = client.post(
        reverse("adjudication:verifier-run-create"),
        {"contest": "TESTCONTEST", "kind": "verify", "endpoint": endpoint.pk, "samples": 2},
    )
    run = VerifierRun.objects.get()
    assert response.status_code == 302 and run.total == 4


def test_the_verification_pages_two_forms_have_their_own_ids_and_errors_sit_under_their_field(
    client, admin
):
    """The two forms share field names (contest, verifier, ...): each form's ids are its own, so
    each label points at its own field; a missing endpoint is said in the endpoint's paragraph,
    not under the field before it."""
    client.force_login(admin)
    refused = client.post(
        reverse("adjudication:verifier-run-create"), {"kind": "verify", "samples": 1}
    )
    page = refused.content.decode()
    ids = re.findall(r'\bid="([^"]+)"', page)
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)
    assert 'for="run_verifier"' in page and 'for="loop_verifier"' in page
    paragraph = re.search(r'<p><label for="run_endpoint">.*?</p>', page, re.S).group()
    assert 'id="run_endpoint_error"' in paragraph and "This field is required." in paragraph
    kind = re.search(r'<p><label for="run_kind">.*?</p>', page, re.S).group()
    assert "errorlist" not in kind


def test_labelling_run_page_shows_counts_tokens_and_polls_while_running(
    client, admin, fake_llm, settings, django_assert_max_num_queries
):
    settings.LLM_BACKOFF_SECONDS = 0
    endpoint = LLMEndpointFactory(base_url=fake_llm.base_url, api_key_env="")
    proofs = ProofFactory.create_batch(3)
    replies.script_proof(fake_llm, proofs[0], replies.CLEAN)
    run = labelling.labelling_run_start(
        proofs=proofs, verifier=endpoint, meta_verifier=endpoint, n=1, m=1, k=1, user=admin
    )
    labelling.labelling_outcome_execute(outcome_id=run.outcomes.order_by("id").first().pk)
    client.force_login(admin)
    url = reverse("adjudication:labelling-run", args=[run.pk])
    with django_assert_max_num_queries(12):
        page = client.get(url).content.decode()
    assert 'id="count-labelled">1<' in page and 'hx-trigger="every 2s"' in page
    assert "Token cost" in page and "Audit against experts" in page
    fragment = client.get(url, HTTP_HX_REQUEST="true").content.decode()
    assert fragment.startswith('<div id="run-progress"') and "<html" not in fragment


def test_verification_api_starts_and_reads_runs_and_lists_analyses(
    api_client_for, admin, django_capture_on_commit_callbacks
):
    LLMEndpointFactory(name="api-verifier")
    proof = ProofFactory()
    analysis = VerifierAnalysisFactory(proof=proof, score=Decimal("0.5"))
    api = api_client_for(admin)
    with django_capture_on_commit_callbacks(execute=False):
        started = api.post(
            reverse("api-labelling-run-start"),
            {"proof_ids": [proof.pk], "verifier": "api-verifier", "meta_verifier": "api-verifier",
             "n": 2, "m": 3, "k": 1, "confirm_at": "0.5"},
            format="json",
        )  # fmt: skip
    assert started.status_code == 201, started.json()
    body = api.get(reverse("api-labelling-run", args=[started.json()["id"]])).json()
    assert (body["n"], body["confirm_at"], body["status"]) == (2, "0.5", "pending")
    assert set(RunStatusOutput().fields) <= body.keys()
    assert body["outcomes"][0]["proof_id"] == proof.pk
    with django_capture_on_commit_callbacks(execute=False):
        meta_run = api.post(
            reverse("api-verifier-run-start"),
            {"proof_ids": [proof.pk], "kind": "meta_verify", "endpoint": "api-verifier",
             "samples": 2},
            format="json",
        )  # fmt: skip
    assert meta_run.status_code == 201 and meta_run.json()["target_ids"] == [analysis.pk]
    run_body = api.get(reverse("api-verifier-run", args=[meta_run.json()["id"]])).json()
    assert run_body["status"] == "pending" and run_body["total"] == 2
    assert set(RunStatusOutput().fields) <= run_body.keys()
    unknown = api.post(
        reverse("api-verifier-run-start"),
        {"proof_ids": [proof.pk, 999999], "kind": "verify", "endpoint": "nope"},
        format="json",
    )
    assert unknown.status_code == 400 and "no such proof: 999999" in str(unknown.json())
    listed = api_client_for(UserFactory(roles=["researcher"])).get(
        reverse("api-analyses"), {"proof": proof.pk}
    )
    assert listed.json()["results"][0]["score"] == "0.5"
    expert_api = api_client_for(UserFactory(roles=["expert"]))
    assert expert_api.get(reverse("api-analyses")).status_code == 403
    assert expert_api.post(reverse("api-labelling-run-start"), {}).status_code == 403


def test_analysis_items_from_the_campaign_items_page(client, admin):
    campaign = CampaignFactory(task_kind="analysis_review", scale="0-0.5-1", double_share=0)
    proof = ProofFactory(problem__contest="ITEMSC")
    VerifierAnalysisFactory.create_batch(2, proof=proof)
    client.force_login(admin)
    response = client.post(
        reverse("annotation:items-create", args=[campaign.slug]), {"contest": "ITEMSC"}
    )
    assert response.status_code == 302
    assert campaign.items.filter(analysis__isnull=False).count() == 2


def test_a_review_with_an_override_is_listed_with_its_reason(api_client_for, admin):
    item = analysis_item()
    expert = _assigned(item)
    meta_review_submit(
        item=item,
        expert=expert,
        data=MetaReviewInput.from_data(
            {"expression_error": False, "score_fits": True, "override": "0.5",
             "override_reason": "the score is right for the wrong reason"}
        ),
    )  # fmt: skip
    (row,) = api_client_for(admin).get(reverse("api-meta-reviews")).json()["results"]
    assert (row["derived_rating"], row["override"], row["score"]) == ("1", "0.5", "0.5")
    assert MetaReview.objects.get().override_reason.startswith("the score is right")


def test_the_proof_grading_endpoints_refuse_analysis_items(client, api_client_for):
    item = analysis_item()
    expert = _assigned(item)
    client.force_login(expert)
    response = client.put(
        reverse("api-item-draft", args=[item.pk]), {"score": "1"}, content_type="application/json"
    )
    assert response.status_code == 400 and "analysis review" in response.json()["problems"][0]
    api = api_client_for(expert)
    response = api.post(reverse("api-item-submit", args=[item.pk]), {"score": "1"}, format="json")
    assert response.status_code == 400 and "review/" in str(response.json())
    assert not item.grades.exists()


def test_adjudicator_sees_the_analysis_and_both_reviews_side_by_side(
    client, django_capture_on_commit_callbacks
):
    item = analysis_item(required_judgements=2)
    a, b = _assigned(item, "case-a"), _assigned(item, "case-b")
    with django_capture_on_commit_callbacks(execute=True):
        meta_review_submit(
            item=item,
            expert=a,
            data=MetaReviewInput.from_data({"expression_error": False, "score_fits": True}),
        )
    with django_capture_on_commit_callbacks(execute=True):
        meta_review_submit(
            item=item,
            expert=b,
            data=MetaReviewInput.from_data(
                {"defects": [defect(ANALYSIS_TEXT, GAP, exists=False, note="x is positive")]}
            ),
        )
    case = item.adjudication_cases.get()
    client.force_login(UserFactory(roles=["adjudicator", "admin"]))
    page = client.get(reverse("adjudication:case", args=[case.pk])).content.decode()
    assert "The verifier analysis under review" in page
    assert "does not exist" in page and "x is positive" in page
    assert "none: the analysis claims no defect" in page
    assert "case-a" not in page and "case-b" not in page  # anonymised


def test_verifier_run_page_lists_the_samples_with_broken_contracts(
    client, admin, fake_llm, settings, django_assert_max_num_queries
):
    settings.LLM_BACKOFF_SECONDS = 0
    from adjudication.verification import verifier_runs
    from tests.llm.fake_openai import text

    endpoint = LLMEndpointFactory(base_url=fake_llm.base_url, api_key_env="")
    target = ProofFactory(text="A proof for the samples table.")
    fake_llm.on(target.text, text(replies.GAP), text(replies.BROKEN))
    run = verifier_runs.verifier_run_start(
        kind="verify", endpoint=endpoint, targets=[target], samples=2, user=admin
    )
    verifier_runs.verifier_run_execute(run_id=run.pk)
    client.force_login(admin)
    with django_assert_max_num_queries(10):
        page = client.get(reverse("adjudication:verifier-run", args=[run.pk])).content.decode()
    assert 'data-score="0.5"' in page and 'data-score="none"' in page
    assert "the text has no final phrase" in page
