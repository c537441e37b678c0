"""Browser flow of scheme generation: an admin filters problems, picks them, chooses RefGrader
(milestones) and the endpoint, starts; the run page follows the real Celery worker through htmx
polling until each problem has its scheme; the scheme opens. The model is the fake server."""

import pytest
from playwright.sync_api import expect

from tests.factories import UserFactory
from tests.llm import replies
from tests.rubrics.generation_factories import LLMEndpointFactory, problem_with_solutions

pytestmark = [pytest.mark.e2e, pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_admin_generates_schemes_and_follows_the_run(
    page, live_server, login, screenshot_dir, celery_worker_process, fake_llm, assert_accessible
):
    replies.script_refgrader(fake_llm, "milestones")
    LLMEndpointFactory(name="fake-vllm", base_url=fake_llm.base_url, api_key_env="")
    first = problem_with_solutions(external_id="USAMO-2025-P2", contest="USAMO", year=2025)
    second = problem_with_solutions(
        replies.SOLUTION_B, external_id="USAMO-2025-P5", contest="USAMO", year=2025
    )
    problem_with_solutions(external_id="IMO-2024-P1", contest="IMO", year=2024)
    login(page, UserFactory(username="admin-e2e", roles=["admin"]))

    with page.expect_navigation():  # until load: htmx is listening
        page.click("nav.mainnav >> text=Generate")
    page.wait_for_selector("#generation-problems input[name=problems]")
    page.select_option("#id_contest", "USAMO")
    expect(page.locator("#generation-problems input[name=problems]")).to_have_count(2)
    page.check("#select-all")
    page.select_option("#id_method", "refgrader_milestones")
    page.select_option("#id_endpoint", label="fake-vllm (fake-model)")
    page.screenshot(path=str(screenshot_dir / "generation-page.png"), full_page=True)
    assert_accessible(page)
    page.click("text=Start generation")

    page.wait_for_url("**/rubrics/generate/runs/*/")
    page.wait_for_selector("#run-progress[data-status=succeeded]", timeout=90_000)
    assert page.inner_text("#run-status") == "Done"
    assert "2 of 2 done" in page.inner_text(".run-summary")
    statuses = page.locator("#run-tasks tbody tr").evaluate_all(
        "rows => rows.map(r => r.dataset.status)"
    )
    assert statuses == ["succeeded", "succeeded"]
    page.screenshot(path=str(screenshot_dir / "generation-run.png"), full_page=True)
    assert_accessible(page)

    page.reload()  # the state lives in the database
    assert page.inner_text("#run-status") == "Done"
    page.click(f"#task-{first.generation_tasks.get().pk} >> text=Version 1")
    page.wait_for_url("**/rubrics/*/")
    assert "USAMO-2025-P2" in page.inner_text("main")
    page.screenshot(path=str(screenshot_dir / "generation-scheme.png"), full_page=True)
    assert_accessible(page)
    assert second.marking_schemes.count() == 1
    # the first: clusters, 2 analyses, 2 rubrics; the second (one solution): no clustering call
    assert len(fake_llm.log) == 5 + 2

    with page.expect_navigation():  # until load: htmx is listening
        page.click("nav.mainnav >> text=Generate")
    page.click("#configs >> text=Freeze")
    page.wait_for_selector("#configs .tag.frozen")
    assert "is frozen" in page.inner_text(".messages")
    assert "Done" in page.inner_text("#runs")
    page.screenshot(path=str(screenshot_dir / "generation-page-frozen.png"), full_page=True)
    assert_accessible(page)


def test_a_failed_problem_shows_the_raw_reply_and_is_retried_from_the_page(
    page, live_server, login, screenshot_dir, celery_worker_process, fake_llm, assert_accessible
):
    from tests.llm.fake_openai import text

    replies.script_proofbench(
        fake_llm,
        text("I could not finish the scheme: the solution is too long."),
        text(replies.PROOFBENCH_SCHEME),
    )
    LLMEndpointFactory(name="fake-hosted", base_url=fake_llm.base_url, api_key_env="")
    problem = problem_with_solutions(replies.SOLUTION_A, external_id="EGMO-2024-P3")
    login(page, UserFactory(username="admin-e2e-2", roles=["admin"]))
    page.goto(f"{live_server.url}/rubrics/generate/")
    page.check(f"#problem-{problem.pk}")
    page.select_option("#id_method", "proofbench")
    page.click("text=Start generation")
    page.wait_for_selector("#run-progress[data-status=failed]", timeout=90_000)
    page.click("#run-tasks summary")
    assert "too long" in page.inner_text("#run-tasks .raw-reply")
    assert "no 'Checkpoints' section" in page.inner_text("#run-tasks .task-error")
    page.screenshot(path=str(screenshot_dir / "generation-run-failed.png"), full_page=True)
    assert_accessible(page)

    page.click("#run-tasks >> text=Retry")
    page.wait_for_selector("#run-progress[data-status=succeeded]", timeout=90_000)
    assert page.inner_text("#run-tasks tbody tr td:nth-child(3)") == "2"  # attempts
    assert problem.marking_schemes.get().is_valid


def test_an_opened_raw_reply_stays_open_while_the_run_page_polls(
    page, live_server, login, celery_worker_process, fake_llm, assert_accessible
):
    from tests.llm.fake_openai import slow, text

    fake_llm.on((replies.PROOFBENCH, "Slow solution"), slow(6, replies.PROOFBENCH_SCHEME))
    fake_llm.on(replies.PROOFBENCH, text("No scheme, sorry."))
    LLMEndpointFactory(name="fake", base_url=fake_llm.base_url, api_key_env="", timeout_seconds=30)
    failing = problem_with_solutions("Fast solution: obvious.", external_id="A-FAST")
    slow_one = problem_with_solutions("Slow solution: long.", external_id="B-SLOW")
    login(page, UserFactory(username="admin-e2e-3", roles=["admin"]))
    page.goto(f"{live_server.url}/rubrics/generate/")
    page.check("#select-all")
    page.select_option("#id_method", "proofbench")
    page.click("text=Start generation")
    page.wait_for_selector(f"#task-{failing.generation_tasks.get().pk}[data-status=failed]")
    assert page.get_attribute("#run-progress", "data-status") == "running"
    page.click(f"#task-{failing.generation_tasks.get().pk} summary")
    page.wait_for_timeout(4500)  # two polls of the progress fragment
    assert page.locator(f"#task-{failing.generation_tasks.get().pk} details[open]").count() == 1
    page.wait_for_selector("#run-progress[data-status=failed]", timeout=60_000)
    assert slow_one.marking_schemes.count() == 1
    assert_accessible(page)
