"""Browser flow of a pairwise grader run: a researcher starts one from a pairwise campaign's
grader selection page; the real Celery worker asks the fake model server about every pair in
both orders (a judge that always picks the proof shown first) while the page follows it (htmx
polling) to the position bias: every pick flips, first-position preference +0.5. A reply
without its tag is a failed call, shown with its raw text and asked again from the page."""

import pytest

from rubrics.models import LLMEndpoint
from tests.annotation.pair_factories import pairwise_campaign
from tests.factories import UserFactory
from tests.llm.fake_openai import text

pytestmark = [pytest.mark.e2e, pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_researcher_measures_a_pairwise_judges_position_bias(
    page, live_server, login, celery_worker_process, fake_llm, assert_accessible
):
    researcher = UserFactory(username="picks-e2e", roles=["researcher"])
    LLMEndpoint.objects.create(
        name="fake-judge", base_url=fake_llm.base_url, model="gpt-judge", api_key_env=""
    )
    campaign, _, _ = pairwise_campaign(generators=("model-a", "model-b", "model-c"))
    fake_llm.on("Proof shown first\nProof of 0 by way number w2x.", text("Hard to say."))
    fake_llm.on("Which of the two proofs", text("The first.\n<choice>first</choice>"))
    login(page, researcher)
    page.goto(f"{live_server.url}/exports/pairs/{campaign.slug}/selection/")
    form = page.locator("#pick-run-form")
    form.locator("#picks_endpoint").select_option(label="fake-judge (gpt-judge)")
    form.locator("#picks_name").fill("first-shown judge")
    form.locator("button[type=submit]").click()
    page.wait_for_selector("#flip-rate", timeout=120_000)
    assert page.inner_text("#flip-rate") == "1.000"
    assert page.inner_text("#first-preference") == "0.500"
    assert len(fake_llm.log) == 6
    assert "first-shown judge" in page.inner_text("#pick-run-list")
    # the two calls with model-c's proof shown first gave no tag: kept, and asked again
    failed = page.locator("#pick-failed-calls")
    assert "2 calls without a usable pick" in failed.inner_text()
    assert "Hard to say." in failed.text_content()  # the raw reply, behind its <details>
    assert_accessible(page)
    fake_llm.reset()
    fake_llm.on("Which of the two proofs", text("The first.\n<choice>first</choice>"))
    failed.get_by_role("button", name="Ask the failed calls again").dblclick()
    page.locator("#pick-failed-calls").wait_for(state="detached", timeout=120_000)
    assert len(fake_llm.log) == 2  # the failed calls only, once each despite the double click
    assert page.inner_text("#flip-rate") == "1.000"
