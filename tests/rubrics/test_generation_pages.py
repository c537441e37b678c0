"""The generation page, the run page (htmx progress, failures, retry, estimated cost), freezing,
endpoint prices, and the generation API. Jobs run in-process against the fake server where a
test needs their result."""

from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.urls import reverse

from core.api import RunStatusOutput
from rubrics import generation
from rubrics.models import GenerationRun, GeneratorConfig, JobStatus, LLMEndpoint
from rubrics.templatetags.rubrics_tags import usd
from tests.factories import UserFactory
from tests.llm import replies
from tests.llm.fake_openai import text
from tests.rubrics.generation_factories import (
    GeneratorConfigFactory,
    LLMEndpointFactory,
    problem_with_solutions,
)

pytestmark = pytest.mark.django_db

SECRET = "sk-very-secret-value"


@pytest.fixture(autouse=True)
def key_in_env(settings, monkeypatch):
    settings.LLM_BACKOFF_SECONDS = 0.01
    monkeypatch.setenv("PROOFMARK_TEST_LLM_KEY", SECRET)


@pytest.fixture
def admin_client(client, admin_user):
    client.force_login(admin_user)
    return client


def test_without_an_endpoint_the_page_says_a_model_is_needed(admin_client):
    problem_with_solutions("S")
    response = admin_client.get(reverse("rubrics:generate"))
    body = response.content.decode()
    assert response.status_code == 200
    assert "A language model is needed" in body
    assert reverse("admin:rubrics_llmendpoint_add") in body
    assert "disabled>Start generation" in body


def test_page_lists_problems_endpoints_and_never_shows_the_key(admin_client):
    LLMEndpointFactory(name="local-vllm", model="deepseek-math-v2")
    LLMEndpointFactory(name="hosted", api_key_env="PROOFMARK_UNSET_KEY_VAR")
    problem = problem_with_solutions("S", external_id="USAMO-2025-P2", contest="USAMO", year=2025)
    response = admin_client.get(reverse("rubrics:generate"))
    body = response.content.decode()
    assert "A language model is needed" not in body
    assert "USAMO-2025-P2" in body and f'value="{problem.pk}"' in body
    assert "deepseek-math-v2" in body and "key set" in body
    assert "PROOFMARK_UNSET_KEY_VAR is not set" in body
    assert SECRET not in body


def test_filter_fragment_narrows_the_problems(admin_client, django_assert_max_num_queries):
    problem_with_solutions("S", external_id="IMO-2024-P1", contest="IMO", year=2024)
    problem_with_solutions("S", external_id="APMO-2023-P3", contest="APMO", year=2023)
    with django_assert_max_num_queries(6):
        response = admin_client.get(
            reverse("rubrics:generate"), {"contest": "IMO"}, HTTP_HX_REQUEST="true"
        )
    body = response.content.decode()
    assert "<html" not in body
    assert "IMO-2024-P1" in body and "APMO-2023-P3" not in body


def test_only_admins_reach_generation(client, fake_llm):
    client.force_login(UserFactory(roles=["expert"]))
    assert client.get(reverse("rubrics:generate")).status_code == 403
    assert client.post(reverse("rubrics:generate"), {}).status_code == 403


def test_start_creates_a_run_and_sends_its_jobs_after_commit(
    admin_client, django_capture_on_commit_callbacks
):
    endpoint = LLMEndpointFactory()
    problems = [problem_with_solutions("S") for _ in range(2)]
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = admin_client.post(
            reverse("rubrics:generate"),
            {
                "problems": [p.pk for p in problems],
                "method": "refgrader_milestones",
                "prompt_version": "v1",
                "endpoint": endpoint.pk,
                "reuse_steps": "on",
            },
        )
    run = GenerationRun.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("rubrics:generation-run", args=[run.pk])
    assert len(callbacks) == 1
    assert run.total == 2 and run.method == "refgrader_milestones" and run.reuse_steps
    assert run.config.endpoint == endpoint


def test_start_form_says_what_is_missing(admin_client):
    LLMEndpointFactory()
    response = admin_client.post(reverse("rubrics:generate"), {"method": "proofbench"})
    body = response.content.decode()
    assert response.status_code == 200
    assert "Choose at least one problem." in body
    assert "Choose a value, or an existing configuration above." in body
    assert not GenerationRun.objects.exists()


def test_run_page_polls_until_finished_then_shows_the_scheme(
    admin_client, fake_llm, admin_user, django_assert_max_num_queries
):
    endpoint = LLMEndpointFactory(base_url=fake_llm.base_url)
    replies.script_proofbench(fake_llm)
    config = GeneratorConfigFactory(endpoint=endpoint)
    problems = [problem_with_solutions(f"S{i}") for i in range(3)]
    run = generation.generation_run_start(config=config, problems=problems, user=admin_user)
    url = reverse("rubrics:generation-run", args=[run.pk])
    body = admin_client.get(url).content.decode()
    assert 'hx-trigger="every 2s"' in body and "0</strong> of 3 done" in body
    for task in run.tasks.all():
        generation.generation_task_execute(task_id=task.pk)
    with django_assert_max_num_queries(8):
        response = admin_client.get(url, HTTP_HX_REQUEST="true")
    fragment = response.content.decode()
    assert "<html" not in fragment and "hx-trigger" not in fragment
    assert "3</strong> of 3 done" in fragment
    scheme = run.tasks.first().scheme
    assert reverse("rubrics:detail", args=[scheme.pk]) in fragment


def test_run_page_shows_the_estimated_cost_where_the_endpoint_has_prices(
    admin_client, admin_user, django_assert_max_num_queries
):
    priced = LLMEndpointFactory(
        input_price_per_million=Decimal("3"), output_price_per_million=Decimal("15")
    )
    runs = [
        generation.generation_run_start(
            config=GeneratorConfigFactory(endpoint=endpoint),
            problems=[problem_with_solutions("S")],
            user=admin_user,
        )
        for endpoint in (priced, LLMEndpointFactory())
    ]
    GenerationRun.objects.update(prompt_tokens=1_200_000, completion_tokens=300_000)
    with django_assert_max_num_queries(8):
        body = admin_client.get(reverse("rubrics:generation-run", args=[runs[0].pk])).content
    page = body.decode()
    assert "1200000 prompt + 300000 completion tokens, about <strong" in page
    assert ">$8.10</strong>" in page  # 1.2 M x $3 + 0.3 M x $15
    assert "at $3.00 a million input and $15.00 a million output tokens" in page
    unpriced = admin_client.get(reverse("rubrics:generation-run", args=[runs[1].pk])).content
    assert b"completion tokens</span>" in unpriced and b"run-cost" not in unpriced


def test_an_endpoint_has_both_token_prices_or_neither():
    endpoint = LLMEndpointFactory.build(input_price_per_million=Decimal("0.5"))
    with pytest.raises(ValidationError, match="both token prices"):
        endpoint.full_clean()
    with pytest.raises(IntegrityError), transaction.atomic():
        endpoint.save()
    endpoint.output_price_per_million = Decimal("0")
    endpoint.save()
    assert endpoint.token_cost(prompt_tokens=3_000, completion_tokens=10) == Decimal("0.0015")
    assert LLMEndpointFactory().token_cost(prompt_tokens=1, completion_tokens=1) is None


@pytest.mark.parametrize(
    ("amount", "shown"),
    [("0", "$0.00"), ("0.004", "< $0.01"), ("0.015", "$0.02"), ("1234.567", "$1,234.57")],
)
def test_usd_filter(amount, shown):
    assert usd(Decimal(amount)) == shown


def test_failed_task_shows_the_raw_reply_and_retries(admin_client, fake_llm, admin_user):
    endpoint = LLMEndpointFactory(base_url=fake_llm.base_url)
    replies.script_proofbench(
        fake_llm, text("Sorry, <b>no</b> scheme today."), text(replies.PROOFBENCH_SCHEME)
    )
    run = generation.generation_run_start(
        config=GeneratorConfigFactory(endpoint=endpoint),
        problems=[problem_with_solutions("S")],
        user=admin_user,
    )
    task = run.tasks.get()
    generation.generation_task_execute(task_id=task.pk)
    body = admin_client.get(reverse("rubrics:generation-run", args=[run.pk])).content.decode()
    assert "no &#x27;Checkpoints&#x27; section" in body
    assert "Sorry, &lt;b&gt;no&lt;/b&gt; scheme today." in body  # raw text, escaped
    assert reverse("rubrics:generation-task-retry", args=[task.pk]) in body
    response = admin_client.post(reverse("rubrics:generation-task-retry", args=[task.pk]))
    assert response.status_code == 302
    task.refresh_from_db()
    assert task.status == JobStatus.PENDING
    generation.generation_task_execute(task_id=task.pk)
    task.refresh_from_db()
    assert task.status == JobStatus.SUCCEEDED


def test_freeze_from_the_page(admin_client, admin_user):
    config = GeneratorConfigFactory()
    response = admin_client.post(reverse("rubrics:generator-config-freeze", args=[config.pk]))
    assert response.status_code == 302
    config.refresh_from_db()
    assert config.is_frozen and config.frozen_by == admin_user
    body = admin_client.get(reverse("rubrics:generate")).content.decode()
    assert "frozen" in body and "already frozen" not in body
    admin_client.post(reverse("rubrics:generator-config-freeze", args=[config.pk]))
    body = admin_client.get(reverse("rubrics:generate")).content.decode()
    assert "already frozen" in body


def test_admin_pages_keep_a_frozen_config_read_only(admin_client, admin_user):
    admin_user.is_staff = admin_user.is_superuser = True
    admin_user.save()
    endpoint = LLMEndpointFactory()
    config = GeneratorConfigFactory(endpoint=endpoint)
    generation.generator_config_freeze(config=config, user=admin_user)
    change = reverse("admin:rubrics_generatorconfig_change", args=[config.pk])
    body = admin_client.get(change).content.decode()
    assert 'name="method"' not in body  # shown, not editable
    endpoint_page = admin_client.get(
        reverse("admin:rubrics_llmendpoint_change", args=[endpoint.pk])
    ).content.decode()
    assert 'name="api_key_env"' in endpoint_page and SECRET not in endpoint_page


def test_api_starts_a_run_and_reads_its_status(
    api_client_for, admin_user, fake_llm, django_capture_on_commit_callbacks
):
    endpoint = LLMEndpointFactory(name="fake", base_url=fake_llm.base_url)
    replies.script_proofbench(fake_llm)
    problem = problem_with_solutions("S", external_id="PB-Basic-002")
    api = api_client_for(admin_user)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = api.post(
            "/api/v1/generation-runs/",
            {"problems": ["PB-Basic-002"], "method": "proofbench", "endpoint": "fake"},
            format="json",
        )
    assert response.status_code == 201, response.json()
    data = response.json()
    assert len(callbacks) == 1
    assert data["status"] == "pending" and data["total"] == 1 and not data["finished"]
    assert data["tasks"][0]["problem"] == "PB-Basic-002"
    assert data["model"] == endpoint.model
    generation.generation_task_execute(task_id=data["tasks"][0]["id"])
    status = api.get(f"/api/v1/generation-runs/{data['id']}/").json()
    assert status["status"] == "succeeded" and status["done"] == 1 and status["finished"]
    assert status["tasks"][0]["scheme_id"] == problem.marking_schemes.get().pk
    assert status["prompt_tokens"] > 0
    assert set(RunStatusOutput().fields) <= status.keys()


def test_api_refuses_bad_input_and_non_admins(api_client_for, admin_user):
    LLMEndpointFactory(name="fake")
    problem_with_solutions("S", external_id="PB-1")
    api = api_client_for(admin_user)
    unknown = api.post(
        "/api/v1/generation-runs/",
        {"problems": ["PB-1", "NOPE"], "method": "proofbench", "endpoint": "fake"},
        format="json",
    )
    assert unknown.status_code == 400 and "NOPE" in str(unknown.json())
    missing = api.post("/api/v1/generation-runs/", {"problems": ["PB-1"]}, format="json")
    assert missing.status_code == 400 and "config id" in str(missing.json())
    bad_version = api.post(
        "/api/v1/generation-runs/",
        {"problems": ["PB-1"], "method": "proofbench", "endpoint": "fake", "prompt_version": "v9"},
        format="json",
    )
    assert bad_version.status_code == 400 and "v9" in str(bad_version.json())
    assert not GeneratorConfig.objects.exists()
    expert = api_client_for(UserFactory(roles=["expert"]))
    assert expert.get("/api/v1/generation-runs/1/").status_code == 403


def test_endpoint_from_the_settings(admin_client, settings):
    settings.LLM_BASE_URL, settings.LLM_MODEL = "", ""
    body = admin_client.get(reverse("rubrics:generate")).content.decode()
    assert "Use it as the endpoint" not in body
    settings.LLM_BASE_URL, settings.LLM_MODEL = "http://127.0.0.1:8000/v1", "deepseek-math-v2"
    body = admin_client.get(reverse("rubrics:generate")).content.decode()
    assert "Use it as the endpoint" in body
    admin_client.post(reverse("rubrics:llm-endpoint-from-settings"))
    body = admin_client.get(reverse("rubrics:generate")).content.decode()
    assert "A language model is needed" not in body and "deepseek-math-v2" in body
    endpoint = LLMEndpoint.objects.get(name="settings")
    assert endpoint.api_key_env == "LLM_API_KEY"  # names the variable, never holds a value


def test_an_endpoint_in_the_environment_is_there_after_migrate(admin_client, settings):
    """`make run` (and a release) migrates: the endpoint of LLM_BASE_URL and LLM_MODEL is then
    there, with no button to press; without them nothing is made."""
    from django.core.management.sql import emit_post_migrate_signal

    settings.LLM_BASE_URL, settings.LLM_MODEL = "", ""
    emit_post_migrate_signal(verbosity=0, interactive=False, db="default")
    assert not LLMEndpoint.objects.exists()
    settings.LLM_BASE_URL, settings.LLM_MODEL = "http://127.0.0.1:8000/v1", "deepseek-math-v2"
    emit_post_migrate_signal(verbosity=0, interactive=False, db="default")
    body = admin_client.get(reverse("rubrics:generate")).content.decode()
    assert "A language model is needed" not in body and "deepseek-math-v2" in body


def test_a_link_can_preselect_one_problem(admin_client):
    LLMEndpointFactory()
    wanted = problem_with_solutions("S", external_id="PB-Basic-002")
    other = problem_with_solutions("S", external_id="PB-Basic-003")
    body = admin_client.get(
        reverse("rubrics:generate"), {"q": "PB-Basic", "problems": wanted.pk}
    ).content.decode()
    assert f'value="{wanted.pk}" id="problem-{wanted.pk}" form="generation-form" checked' in body
    assert f'value="{other.pk}" id="problem-{other.pk}" form="generation-form">' in body


@pytest.mark.parametrize("rows", [1, 4])
def test_generation_page_queries_do_not_grow_with_rows(
    admin_client, admin_user, rows, django_assert_max_num_queries
):
    for _ in range(rows):
        config = GeneratorConfigFactory()
        generation.generator_config_freeze(config=config, user=admin_user)
        generation.generation_run_start(
            config=config, problems=[problem_with_solutions("S")], user=admin_user
        )
    with django_assert_max_num_queries(12):
        response = admin_client.get(reverse("rubrics:generate"))
    assert response.content.decode().count("Run ") >= rows


def test_admin_checks_that_endpoints_answer(admin_client, admin_user, fake_llm):
    admin_user.is_staff = admin_user.is_superuser = True
    admin_user.save()
    fake_llm.on("connection check", text("<think>easy</think>ready"))
    working = LLMEndpointFactory(name="working", base_url=fake_llm.base_url)
    down = LLMEndpointFactory(name="down", base_url="http://127.0.0.1:9/v1")
    response = admin_client.post(
        reverse("admin:rubrics_llmendpoint_changelist"),
        {"action": "check_answers", "_selected_action": [working.pk, down.pk]},
        follow=True,
    )
    body = response.content.decode()
    assert "Working answered &#x27;ready&#x27; as fake-model" in body
    assert "Down did not answer: could not reach the model endpoint" in body
    assert [entry["authorization"] for entry in fake_llm.log] == [f"Bearer {SECRET}"]
    assert SECRET not in body


def test_system_checks_and_migrations_are_clean():
    from io import StringIO

    from django.core.management import call_command

    call_command("check", stdout=StringIO())  # e.g. an admin action shadowing ModelAdmin.check
    call_command("makemigrations", "rubrics", "--check", "--dry-run", stdout=StringIO())
