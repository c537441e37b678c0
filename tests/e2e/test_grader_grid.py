"""Browser flow of a grader design-space study: a researcher chooses one endpoint, two contexts,
both instructions and two runs on the evaluations page; the real Celery worker grades every cell
through the fake model server while the page follows it (htmx polling) to the report: the plain
verdict, the rankings with intervals and paired tests, the bias probes, the alternative
annotator test and the ensemble chart."""

from decimal import Decimal

import pytest

from rubrics.models import LLMEndpoint
from tests.factories import UserFactory
from tests.graders.grid_factories import grid_campaign, script_grader

pytestmark = [pytest.mark.e2e, pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_researcher_runs_a_design_space_study_and_reads_its_report(
    page, live_server, login, screenshot_dir, celery_worker_process, fake_llm, assert_accessible
):
    researcher = UserFactory(username="grid-e2e", roles=["researcher"])
    LLMEndpoint.objects.create(
        name="fake-gpt",
        base_url=fake_llm.base_url,
        model="gpt-fake",
        api_key_env="",
        input_price_per_million=Decimal("0.10"),
        output_price_per_million=Decimal("0.40"),
    )
    corpus = grid_campaign("e2e-grid")
    script_grader(fake_llm, corpus)
    login(page, researcher)
    page.goto(f"{live_server.url}/exports/evaluations/")
    form = page.locator("#grid-form")
    form.locator("#grid_name").fill("Which grader?")
    form.locator("#grid_endpoints").select_option(label="fake-gpt (gpt-fake)")
    for value in ("none", "both"):
        form.locator(f"input[name=contexts][value={value}]").check()
    for value in ("flexible", "strict"):
        form.locator(f"input[name=instructions][value={value}]").check()
    form.locator("#grid_runs").fill("2")
    form.locator("#grid_budget").fill("5")
    form.locator("button[type=submit]").click()
    page.wait_for_selector("#verdict-text", timeout=120_000)
    verdict = page.inner_text("#verdict-text")
    assert "fake-gpt · both · strict" in verdict
    assert "may stand in for an expert on this campaign's kind of proofs" in verdict
    assert len(fake_llm.log) == 4 * 12 * 2

    mae = page.locator("#ranking-mae")
    rows = mae.locator("tbody tr")
    assert rows.count() == 4
    assert "fake-gpt · both · strict" in rows.nth(0).inner_text()
    assert "fake-gpt · none · flexible" in rows.nth(3).inner_text()
    assert "yes" in rows.nth(3).inner_text()  # significantly worse than the best
    page.click("#ranking-qwk summary")
    assert page.locator("#ranking-qwk tbody tr").first.is_visible()
    probes = page.inner_text("#bias-probes")
    assert "No pairwise grader runs" in probes and "openai" in probes
    assert "Number theory" in page.inner_text("#alt-test")
    assert page.locator("#ensembles svg.ensemble").count() == 1
    assert_accessible(page)
    page.screenshot(path=str(screenshot_dir / "grader-grid.png"), full_page=True)
