"""Browser flow of the automated labelling loop: an admin selects proofs on the verification
page, picks the verifier and meta-verifier endpoints and n, m, k, starts; the run page follows the
real Celery worker through htmx polling to the counts and token cost; then the admin sends an
audit sample to an expert campaign. The models are the fake server."""

import re

import pytest

from adjudication.models import LabellingOutcome, LabellingRun
from annotation.models import Item
from tests.annotation.factories import CampaignFactory
from tests.factories import UserFactory
from tests.metaverify import replies
from tests.problems.page_factories import ProofFactory
from tests.rubrics.generation_factories import LLMEndpointFactory

pytestmark = [pytest.mark.e2e, pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def start_loop(page):
    page.fill("#loop-form #loop_contest", "LOOPC")
    page.select_option("#loop-form #loop_verifier", label="fake-verifier (fake-model)")
    page.select_option("#loop-form #loop_meta_verifier", label="fake-meta (fake-model)")
    page.fill("#loop-form #loop_n", "2")
    page.fill("#loop-form #loop_m", "1")
    page.fill("#loop-form #loop_k", "2")
    page.select_option("#loop-form #loop_route_campaign", label="Human labels")
    page.click("text=Start the loop")


def test_admin_runs_the_loop_and_audits_it(
    page, live_server, login, screenshot_dir, celery_worker_process, fake_llm, assert_accessible
):
    LLMEndpointFactory(
        name="fake-verifier",
        base_url=fake_llm.base_url,
        api_key_env="",
        input_price_per_million=3,
        output_price_per_million=15,
    )
    LLMEndpointFactory(
        name="fake-meta",
        base_url=fake_llm.base_url,
        api_key_env="",
        input_price_per_million=1,
        output_price_per_million=2,
    )
    clean = ProofFactory(problem__contest="LOOPC", text="Loop proof one: all steps hold.")
    flawed = ProofFactory(problem__contest="LOOPC", text="Loop proof two: step 2 is wrong.")
    unsure = ProofFactory(problem__contest="LOOPC", text="Loop proof three: a gap maybe.")
    replies.script_proof(fake_llm, clean, replies.CLEAN)
    replies.script_proof(fake_llm, flawed, replies.analysis("0", "Loopflaw: step 2 fails."))
    replies.script_meta(fake_llm, "Loopflaw", replies.CONFIRM)
    replies.script_proof(
        fake_llm, unsure, replies.analysis("0.5", "Loopgap: a case is missing."), replies.CLEAN
    )
    replies.script_meta(fake_llm, "Loopgap", replies.CONFIRM)
    route = CampaignFactory(name="Human labels", scale="0-0.5-1")
    experts = CampaignFactory(name="Expert audit", scale="0-7", double_share=0)
    login(page, UserFactory(username="loop-admin-e2e", roles=["admin"]))

    page.click("nav.mainnav >> text=Verification")
    start_loop(page)

    page.wait_for_url("**/adjudication/verification/loops/*/")
    page.wait_for_selector("#run-progress[data-status=succeeded]", timeout=90_000)
    assert page.inner_text("#count-labelled") == "2"
    assert page.inner_text("#count-routed") == "1"
    assert page.inner_text("#count-failed") == "0"
    assert int(page.inner_text("#tokens").split()[0]) > 0
    assert "$" in page.inner_text("#run-cost")  # both endpoints have prices
    page.screenshot(path=str(screenshot_dir / "labelling-run.png"), full_page=True)
    assert_accessible(page)
    assert Item.objects.get(campaign=route).proof_id == unsure.pk
    progress = page.inner_text("#run-progress")
    # the reason matches the decision, and scores print one way (never 0.50 or 1.0)
    assert "1 valid analysis at the lowest score 0.5, fewer than k = 2" in progress
    assert "0.5 [1] valid" in progress
    assert not re.search(r"\b(0\.50|1\.0|0\.0)\b", progress)
    first_run = page.url

    # Back, and the same loop started again: the run gathers its labels in the same campaign.
    page.go_back()
    start_loop(page)
    page.wait_for_url(lambda url: url != first_run and "/verification/loops/" in url)
    page.wait_for_selector("#run-progress[data-status=succeeded]", timeout=90_000)
    runs = list(LabellingRun.objects.order_by("pk"))
    assert len(runs) == 2 and runs[0].auto_campaign_id == runs[1].auto_campaign_id
    labelled = LabellingOutcome.objects.filter(decision="labelled").values_list("proof_id")
    # a proof labelled twice keeps one item, with the later label
    assert Item.objects.filter(campaign_id=runs[0].auto_campaign_id).count() == len(set(labelled))
    page.goto(first_run)

    page.select_option("#id_campaign", label="Expert audit")
    page.fill("#id_size", "5")
    page.click("text=Send the sample")
    page.wait_for_selector("#audit-figures")
    assert "2 automatically labelled proof(s) sent" in page.inner_text(".messages")
    assert Item.objects.filter(campaign=experts).count() == 2
