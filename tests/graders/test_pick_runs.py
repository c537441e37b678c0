"""A pairwise grader run over real HTTP with the fake model server (graders/services/
pick_runs.py): every pair asked in both orders, the picks stored against the proofs, a malformed
or cut-off reply kept as a failure with its raw text, resumable and retried alone; the position
probe reads the picks (flip rate and first-position preference) and the pairwise selection
compares them with the experts' pairs."""

import pytest

from annotation.services.pairs import pair_judgement_submit, pair_next
from graders.grading import read_pick
from graders.models import PairwisePickRecord, PairwisePickRun
from graders.pairwise import prefer_from_picks, selection_against_pairs
from graders.selectors import pick_run_picks, pick_run_shares
from graders.services.evaluation_import import PredictionError
from graders.services.pick_runs import pick_run, pick_run_create, pick_run_retry
from graders.services.trust_evidence import pairwise_grader_picks, position_evidence
from llm.client import Completion, Usage
from llm.parsers import OutputError
from rubrics.models import LLMEndpoint
from tests.annotation.pair_factories import pairwise_campaign
from tests.conftest import as_job
from tests.factories import UserFactory
from tests.graders.grid_factories import grid_campaign
from tests.llm.fake_openai import text, truncated

pytestmark = pytest.mark.django_db

GENERATORS = ("model-a", "model-b", "model-c", "model-d")  # best first (way number w0x...)
QUESTION = "Which of the two proofs below is the better proof"


@pytest.fixture
def researcher():
    return UserFactory(username="picks-res", roles=["researcher"])


@pytest.fixture
def endpoint(fake_llm):
    return LLMEndpoint.objects.create(
        name="fake-judge", base_url=fake_llm.base_url, model="gpt-judge", max_attempts=1
    )


def shown(position: str, problem: int, k: int) -> str:
    return f"## Proof shown {position}\nProof of {problem} by way number w{k}x."


def script_consistent(fake_llm, problems: int) -> None:
    """A judge that always prefers the better proof (the smaller way number), whatever the order."""
    for n in range(problems):
        for k in range(len(GENERATORS)):
            fake_llm.on(
                shown("first", n, k), text("The first is complete.\n<choice>first</choice>")
            )
            fake_llm.on(
                shown("second", n, k), text("The second is sound.\n<choice>second</choice>")
            )


def experts_judge(campaign, proofs, experts) -> None:
    generator = {p.pk: g for (_, g), p in proofs.items()}
    for expert in experts:
        while (j := pair_next(campaign=campaign, expert=expert)) is not None:
            a = GENERATORS.index(generator[j.pair.proof_a_id])
            b = GENERATORS.index(generator[j.pair.proof_b_id])
            side = "left" if (a < b) == j.a_on_left else "right"
            pair_judgement_submit(judgement_id=j.pk, expert=expert, shown=side)


def run_job(run):
    return as_job("grader_picks", run.pk, lambda: pick_run(run_id=run.pk))


def reply(body: str, finish_reason: str = "stop") -> Completion:
    return Completion(body, Usage(), "m", finish_reason, 1)


def test_the_reply_contract():
    assert read_pick(reply("Both have gaps.\n<choice> Tie </choice>\n")) == "tie"
    assert read_pick(reply("<think>hmm <choice>second</choice></think>\n<choice>first</choice>"))
    for bad, why in (
        ("The first one.", "no <choice>"),
        ("<choice>first</choice> <choice>second</choice>", "2 <choice> tags"),
        ("<choice>left</choice>", "not first, second or tie"),
        ("<choice>first</choice> but maybe not", "goes on after"),
        ("<think>still weighing <choice>first</choice>", "reasoning"),
    ):
        with pytest.raises(OutputError, match=why):
            read_pick(reply(bad))
    with pytest.raises(OutputError, match="token limit"):
        read_pick(reply("<choice>first</choice>", "length"))


def test_a_judge_that_always_picks_the_first_shown_flips_every_pair(researcher, fake_llm, endpoint):
    campaign, proofs, experts = pairwise_campaign(generators=GENERATORS, problems=2)
    experts_judge(campaign, proofs, experts)
    fake_llm.on(QUESTION, text("The first is better.\n<choice>first</choice>"))
    run = pick_run_create(user=researcher, campaign=campaign, endpoint=endpoint)
    assert run.source == "pairs" and run.total == 2 * 12
    run = run_job(run)
    assert run.status == "succeeded" and len(fake_llm.log) == 24 and run.processed == 24
    assert run.prompt_tokens > 0 and run.parameters["prompt"] == "pairwise_pick@v1"
    forward = PairwisePickRecord.objects.filter(run=run, order="forward")
    assert set(forward.values_list("pick", flat=True)) == {"a"}
    assert set(run.records.filter(order="backward").values_list("pick", flat=True)) == {"b"}
    position = run.report["position"]
    assert position["effect"] == 1.0 and position["interval"] == [1.0, 1.0]
    assert position["first_preference"] == 0.5 and position["n"] == 12
    assert pairwise_grader_picks(campaign) == pick_run_picks(run)
    named = position_evidence(campaign, endpoint=endpoint)
    assert named["run"] == run.name and named["endpoint"] == "fake-judge"
    # against the experts: every pick flips, so each pair is a tie for the grader (a half)
    report = selection_against_pairs(campaign, prefer_from_picks(pick_run_shares(run)))
    assert report.agreement.decided == 12 and report.agreement.rate == 0.5
    assert all(p.coin_flips for p in report.problems)  # every game a tie, decided by a coin


def test_a_consistent_judge_never_flips_and_agrees_with_the_experts(researcher, fake_llm, endpoint):
    campaign, proofs, experts = pairwise_campaign(generators=GENERATORS, problems=2)
    experts_judge(campaign, proofs, experts)
    script_consistent(fake_llm, problems=2)
    run = run_job(pick_run_create(user=researcher, campaign=campaign, endpoint=endpoint))
    position = run.report["position"]
    assert position["effect"] == 0.0 and position["first_preference"] == 0.0
    assert position["interval"] == [0.0, 0.0]
    report = selection_against_pairs(campaign, prefer_from_picks(pick_run_shares(run)))
    assert report.agreement.rate == 1.0 and report.knockout_hits == 2


def test_a_malformed_or_cut_off_reply_is_a_failure_kept_with_its_text(
    researcher, fake_llm, endpoint
):
    campaign, _, _ = pairwise_campaign(generators=GENERATORS[:3], problems=1)
    fake_llm.on(shown("first", 0, 1), text("I prefer the first one, clearly."))
    fake_llm.on(shown("first", 0, 2), truncated("The second is better.\n<choice>second</choice>"))
    fake_llm.on(QUESTION, text("Fine.\n<choice>second</choice>"))
    run = run_job(pick_run_create(user=researcher, campaign=campaign, endpoint=endpoint))
    failed = list(run.records.filter(pick="").order_by("id"))
    # w1x or w2x shown first: every call but (w0x, w1x) and (w0x, w2x) forward
    assert len(failed) == 4 and run.report["failures"] == 4 and run.processed == 2
    no_tag = next(f for f in failed if f.raw_reply == "I prefer the first one, clearly.")
    assert "no <choice>" in no_tag.reason
    cut = next(f for f in failed if f.finish_reason == "length")
    assert "token limit" in cut.reason and cut.raw_reply.startswith("The second")
    # no pair has both orders picked: the probe has nothing to measure yet
    assert run.report["position"]["n"] == 0
    # resumable: a run again asks nothing; a retry asks the four failed calls only
    PairwisePickRun.objects.filter(pk=run.pk).update(status="running", heartbeat_at=None)
    asked = len(fake_llm.log)
    pick_run(run_id=run.pk)
    assert len(fake_llm.log) == asked
    fake_llm.reset()
    fake_llm.on(QUESTION, text("<choice>tie</choice>"))
    run.refresh_from_db()
    pick_run_retry(run=run)
    run = run_job(run)
    assert len(fake_llm.log) == 4 and not run.records.filter(pick="").exists()
    assert run.report["position"]["n"] == 3
    with pytest.raises(PredictionError, match="no failed call"):
        pick_run_retry(run=run)


def test_the_failed_calls_are_shown_and_asked_again_from_the_page_and_the_api(
    client, researcher, fake_llm, endpoint
):
    from django.urls import reverse

    campaign, _, _ = pairwise_campaign(generators=GENERATORS[:2], problems=1)
    fake_llm.on(shown("first", 0, 1), text("No tag here, only prose."))
    fake_llm.on(QUESTION, text("<choice>first</choice>"))
    run = run_job(pick_run_create(user=researcher, campaign=campaign, endpoint=endpoint))
    client.force_login(researcher)
    page_url = reverse("exports:pairwise-selection", args=[campaign.slug])
    page = client.get(f"{page_url}?picks_run={run.pk}").content.decode()
    assert 'id="pick-failed-calls"' in page and "No tag here, only prose." in page
    assert "proof b shown first" in page and 'id="pick-retry-form"' in page
    fake_llm.reset()
    fake_llm.on(QUESTION, text("<choice>second</choice>"))
    first_round = run.round
    retry = reverse("exports:pick-run-retry", args=[campaign.slug, run.pk])
    response = client.post(retry)
    assert response.status_code == 302 and response.url == f"{page_url}?picks_run={run.pk}"
    run.refresh_from_db()
    assert (run.status, run.round) == ("pending", first_round + 1)
    run = run_job(run)
    assert len(fake_llm.log) == 1 and not run.records.filter(pick="").exists()
    done = client.get(f"{page_url}?picks_run={run.pk}").content.decode()
    assert 'id="pick-failed-calls"' not in done
    # the API's door: nothing failed now, so nothing to ask again (400, saying why)
    api = f"/api/v1/pick-runs/{run.pk}/retry/"
    refused = client.post(api)
    assert refused.status_code == 400 and "no failed call" in refused.json()["detail"]
    assert client.post("/api/v1/pick-runs/999999999/retry/").status_code == 404
    PairwisePickRecord.objects.filter(run=run).update(pick="", reason="lost")
    accepted = client.post(api)
    assert accepted.status_code == 202 and accepted.json()["status"] == "pending"
    client.force_login(UserFactory(roles=["expert"]))
    assert client.post(api).status_code == 403
    assert client.post(retry).status_code == 403


def test_a_grading_campaigns_labelled_proofs_are_paired_per_problem(researcher, fake_llm, endpoint):
    corpus = grid_campaign("picks")
    fake_llm.on(QUESTION, text("<choice>first</choice>"))
    run = run_job(pick_run_create(user=researcher, campaign=corpus.campaign, endpoint=endpoint))
    # four problems of three labelled proofs: three pairs each, asked twice
    assert run.source == "labelled" and run.total == 24 and len(fake_llm.log) == 24
    assert run.report["position"]["effect"] == 1.0
    assert all(p.problem for p in pairwise_grader_picks(corpus.campaign))
    lone, _, _ = pairwise_campaign(generators=("model-a",))
    with pytest.raises(PredictionError, match="no pair of proofs"):
        pick_run_create(user=researcher, campaign=lone, endpoint=endpoint)


def test_the_selection_page_starts_a_run_and_shows_its_position_bias(
    client, researcher, fake_llm, endpoint
):
    from django.urls import reverse

    campaign, proofs, experts = pairwise_campaign(generators=GENERATORS[:3], problems=1)
    experts_judge(campaign, proofs, experts)
    fake_llm.on(QUESTION, text("<choice>first</choice>"))
    client.force_login(researcher)
    url = reverse("exports:pairwise-selection", args=[campaign.slug])
    page = client.get(url).content.decode()
    assert 'id="pick-run-form"' in page and "fake-judge" in page
    start = reverse("exports:pick-run-start", args=[campaign.slug])
    response = client.post(start, {"endpoint": endpoint.pk, "name": "judge both ways"})
    run = PairwisePickRun.objects.get(name="judge both ways")
    assert response.status_code == 302 and response.url == f"{url}?picks_run={run.pk}"
    queued = client.get(response.url).content.decode()
    assert 'id="pick-run-status"' in queued and "0 of 6 calls picked" in queued
    polled = client.get(response.url, headers={"HX-Request": "true"})
    assert polled.content.decode().startswith('<section id="pick-run-status"')
    assert "HX-Request" in polled["Vary"]
    run_job(run)
    done = client.get(response.url, headers={"HX-Request": "true"})
    assert done.status_code == 200 and done["HX-Refresh"] == "true"
    shown_page = client.get(response.url).content.decode()
    assert 'id="flip-rate">1.000' in shown_page and 'id="first-preference">0.500' in shown_page
    assert 'id="selection-agreement"' in shown_page and "judge both ways" in shown_page
    assert client.post(start, {"endpoint": ""}).status_code == 400
    client.force_login(UserFactory(roles=["expert"]))
    assert client.post(start, {"endpoint": endpoint.pk}).status_code == 403


def test_the_api_queues_a_run(client, researcher, endpoint):
    campaign, _, _ = pairwise_campaign(generators=GENERATORS[:2])
    client.force_login(researcher)
    url = f"/api/v1/campaigns/{campaign.slug}/pairwise-picks/"
    response = client.post(url, {"endpoint": endpoint.pk}, content_type="application/json")
    assert response.status_code == 202, response.content
    body = response.json()
    assert body["total"] == 2 and body["source"] == "pairs" and body["status"] == "pending"
    assert body["endpoint"] == "fake-judge" and body["campaign"] == campaign.slug
    lone, _, _ = pairwise_campaign(generators=("model-a",))
    refused = client.post(
        f"/api/v1/campaigns/{lone.slug}/pairwise-picks/",
        {"endpoint": endpoint.pk},
        content_type="application/json",
    )
    assert refused.status_code == 400 and "no pair of proofs" in refused.json()["detail"]
    client.force_login(UserFactory(roles=["expert"]))
    assert client.post(url, {"endpoint": endpoint.pk}).status_code == 403


def test_a_grader_report_starts_its_endpoints_run_and_shows_its_position_bias(
    client, researcher, fake_llm, endpoint
):
    from django.urls import reverse

    from graders.services.evaluations import evaluation_run, evaluation_run_create

    corpus = grid_campaign("report")
    fake_llm.on(QUESTION, text("<choice>first</choice>"))
    fake_llm.on(
        "<score>", text("<assessment>Fine.</assessment><errors>none</errors><score>5</score>")
    )
    evaluation = evaluation_run_create(
        user=researcher, campaign=corpus.campaign, endpoint=endpoint, name="judge", runs=1
    )
    evaluation = evaluation_run(evaluation_id=evaluation.pk)
    client.force_login(researcher)
    page_url = reverse("exports:evaluation", args=[evaluation.pk])
    page = client.get(page_url).content.decode()
    assert "No pairwise grader runs" in page and 'id="pick-run-form"' in page
    start = reverse("exports:pick-run-start", args=[corpus.campaign.slug])
    response = client.post(start, {"endpoint": endpoint.pk, "name": "both ways", "next": page_url})
    assert response.status_code == 302 and response.url == page_url
    run_job(PairwisePickRun.objects.get(name="both ways"))
    page = client.get(page_url).content.decode()
    assert "the picks of both ways, fake-judge" in page and "No pairwise grader runs" not in page
    assert "first-position preference 0.500" in page
    report = client.get(reverse("exports:evaluation_json", args=[evaluation.pk])).json()
    assert report["position"]["effect"] == 1.0 and report["position"]["run"] == "both ways"
    offsite = client.post(start, {"endpoint": endpoint.pk, "next": "https://elsewhere.example/"})
    assert offsite.url == reverse("exports:evaluations")
