"""Browser flow of a grader endpoint run with a failed prediction: the evaluation page shows the
failure with its raw reply, the tokens and the cost; Retry sends only that prediction through the
real Celery worker, and the page follows it (htmx polling) to the report on every proof. The
model is the fake server."""

import pytest

from graders.models import GraderEvaluation
from graders.services.evaluations import evaluation_run_create
from rubrics.models import LLMEndpoint
from tests.conftest import wait_for
from tests.exports.factories import labelled_campaign
from tests.factories import UserFactory
from tests.llm.fake_openai import text

pytestmark = [pytest.mark.e2e, pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def grade(score: int):
    return text(f"<assessment>Checked.</assessment><errors>none</errors><score>{score}</score>")


def test_researcher_retries_a_failed_prediction(
    page, live_server, login, screenshot_dir, celery_worker_process, fake_llm
):
    researcher = UserFactory(username="eval-e2e", roles=["researcher"])
    endpoint = LLMEndpoint.objects.create(
        name="fake-grader",
        base_url=fake_llm.base_url,
        model="fake-o3",
        api_key_env="",
        input_price_per_million=2,
        output_price_per_million=8,
    )
    corpus = labelled_campaign()  # labels 5, 2, 7
    cut = "<assessment>Step one holds, step two"
    fake_llm.on("Expand $(a-b)^2$.", text(cut, finish_reason="length"), grade(5))
    fake_llm.on("By AM-GM", grade(2))
    fake_llm.on("so 2 and 3 divide it", grade(7))
    evaluation = evaluation_run_create(  # queued on commit: the worker runs it
        user=researcher, campaign=corpus.campaign, endpoint=endpoint, name="fake o3"
    )
    wait_for(
        lambda: GraderEvaluation.objects.filter(pk=evaluation.pk, status="succeeded").first(),
        timeout=90,
    )
    login(page, researcher)

    page.goto(f"{live_server.url}/exports/evaluations/{evaluation.pk}/")
    failures = page.inner_text("#failed-predictions")
    assert "1 prediction without a usable reply" in failures
    assert "cut off at the token limit" in failures
    assert "2 labelled proofs" in page.inner_text("main")
    assert page.inner_text("#run-cost").startswith(("$", "< $"))
    page.click("#failed-predictions summary")
    assert cut in page.inner_text("#failed-predictions pre")
    page.screenshot(path=str(screenshot_dir / "evaluation-failed.png"), full_page=True)

    page.click("text=Retry the failed predictions")
    page.wait_for_selector("text=3 labelled proofs", timeout=90_000)
    assert page.locator("#failed-predictions").count() == 0
    assert len(fake_llm.log) == 4  # three first calls, one retry
    page.screenshot(path=str(screenshot_dir / "evaluation-retried.png"), full_page=True)
