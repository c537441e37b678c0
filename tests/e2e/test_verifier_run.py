"""Browser flow of a verifier run whose model stops mid-thought: an admin starts the run from the
verification page; the run page follows the real Celery worker (htmx polling) to one usable and
one failed sample, shows the failed sample's raw reply and reason, and Retry asks the model again
for that sample only. The model is the fake server."""

import pytest

from problems.models import VerifierAnalysis
from tests.factories import UserFactory
from tests.llm.fake_openai import text, unclosed_think
from tests.metaverify import replies
from tests.problems.page_factories import ProofFactory
from tests.rubrics.generation_factories import LLMEndpointFactory

pytestmark = [pytest.mark.e2e, pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_admin_retries_the_failed_sample_of_a_verifier_run(
    page, live_server, login, screenshot_dir, celery_worker_process, fake_llm
):
    LLMEndpointFactory(
        name="fake-verifier",
        base_url=fake_llm.base_url,
        api_key_env="",
        concurrency=1,
        input_price_per_million=3,
        output_price_per_million=15,
    )
    proof = ProofFactory(problem__contest="VRUN", text="Run proof: the induction closes.")
    fake_llm.on(
        (replies.VERIFIER_NEEDLE, proof.text),
        text(replies.CLEAN),
        unclosed_think("Step 1 holds. Step 2, hmm, let me check the base case again"),
        text(replies.CLEAN),
    )
    login(page, UserFactory(username="vrun-admin-e2e", roles=["admin"]))

    with page.expect_navigation():  # until load: htmx is listening
        page.click("nav.mainnav >> text=Verification")
    page.fill("#verifier-form #run_contest", "VRUN")
    page.select_option("#verifier-form #run_endpoint", label="fake-verifier (fake-model)")
    page.fill("#verifier-form #run_samples", "2")
    page.click("#verifier-form >> text=Start the run")

    page.wait_for_url("**/adjudication/verification/runs/*/")
    page.wait_for_selector("#run-progress[data-status=failed]", timeout=90_000)
    assert "1 of 2 samples usable, 1 failed" in page.inner_text(".run-summary")
    assert page.inner_text("#run-cost").startswith(("$", "< $"))
    page.click("#run-progress details summary")
    assert "(<think>) is never closed" in page.inner_text("#run-progress details")
    page.reload()  # the samples table is drawn on a full load
    failed = page.locator('#samples tr[data-score="none"]')
    assert "never closed" in failed.inner_text()
    failed.locator("summary").click()
    assert "let me check the base case again" in failed.locator("pre").inner_text()
    page.screenshot(path=str(screenshot_dir / "verifier-run-failed.png"), full_page=True)

    page.click("text=Retry the failed samples")
    page.wait_for_selector("#run-progress[data-status=succeeded]", timeout=90_000)
    assert "2 of 2 samples usable" in page.inner_text(".run-summary")
    assert len(fake_llm.log) == 3  # two first calls, one retry
    assert VerifierAnalysis.objects.filter(proof=proof, score__isnull=False).count() == 2
    page.reload()
    page.screenshot(path=str(screenshot_dir / "verifier-run-retried.png"), full_page=True)
