"""Scheme generation services against the fake OpenAI-compatible server: each workflow step,
the step cache, provider errors, timeouts, truncated and malformed output, retries, freezing.
Jobs are run in-process here (`generation_task_execute`); tests/rubrics/test_generation_worker.py
runs them through the real Celery worker."""

import pytest
from django.core.exceptions import ValidationError

from llm.client import LLMTransientError
from rubrics import generation, workflows
from rubrics.models import (
    GenerationStep,
    GeneratorConfig,
    JobStatus,
    MarkingScheme,
)
from rubrics.structure import Scheme, format_points
from tests.conftest import as_job
from tests.llm import replies
from tests.llm.fake_openai import slow, status, text, truncated, unclosed_think
from tests.rubrics.generation_factories import (
    GeneratorConfigFactory,
    LLMEndpointFactory,
    problem_with_solutions,
)

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def quick_backoff(settings, monkeypatch):
    settings.LLM_BACKOFF_SECONDS = 0.01
    monkeypatch.setenv("PROOFMARK_TEST_LLM_KEY", "sk-from-env")


@pytest.fixture
def endpoint(fake_llm):
    return LLMEndpointFactory(base_url=fake_llm.base_url)


def start(endpoint, method, problems, admin_user, **kwargs):
    config = generation.generator_config_get_or_create(
        method=method, prompt_version="v1", endpoint=endpoint, user=admin_user
    )
    return generation.generation_run_start(
        config=config, problems=problems, user=admin_user, **kwargs
    )


def execute_all(run, **kwargs):
    return [
        as_job(
            "scheme_generation",
            task.pk,
            lambda task=task: generation.generation_task_execute(task_id=task.pk, **kwargs),
        )
        for task in run.tasks.order_by("id")
    ]


def totals(scheme: MarkingScheme) -> dict:
    structure = Scheme.from_dict(scheme.structure)
    return {k: format_points(v) for k, v in structure.chain_totals().items()}


def test_proofbench_single_call_creates_a_valid_draft_with_provenance(
    fake_llm, endpoint, admin_user, django_capture_on_commit_callbacks
):
    replies.script_proofbench(fake_llm)
    problem = problem_with_solutions(replies.SOLUTION_A)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        run = start(endpoint, "proofbench", [problem], admin_user)
    assert len(callbacks) == 1  # the jobs are sent once the run is committed
    (task,) = execute_all(run)
    assert task.status == JobStatus.SUCCEEDED and task.attempts == 1
    scheme = task.scheme
    assert scheme.method == "proofbench" and scheme.status == "draft" and scheme.is_valid
    assert scheme.text.startswith("## 1. Checkpoints")  # preamble and reasoning dropped
    assert totals(scheme) == {"A": "7", "B": "7"}
    provenance = scheme.provenance
    assert provenance["model"] == "fake-model"
    assert provenance["prompt_version"] == "v1"
    assert provenance["prompts"] == {"scheme": "proofbench_scheme@v1"}
    assert provenance["parameters"]["temperature"] == 0.0
    assert provenance["token_usage"]["total_tokens"] > 0
    assert "sk-from-env" not in str(provenance)
    (request,) = fake_llm.log
    assert replies.SOLUTION_A in request["user"] and problem.statement in request["user"]
    assert request["authorization"] == "Bearer sk-from-env"
    run.refresh_from_db()
    assert (run.status, run.done_count, run.failed_count, run.total) == (
        JobStatus.SUCCEEDED,
        1,
        0,
        1,
    )
    assert run.prompt_tokens > 0 and run.completion_tokens > 0


@pytest.mark.parametrize("design", ["plain", "approachability", "milestones", "hybrid"])
def test_refgrader_workflow_calls_each_step_once_in_order_and_reuses_them(
    fake_llm, endpoint, admin_user, design
):
    replies.script_refgrader(fake_llm, design)
    problem = problem_with_solutions()
    run = start(endpoint, f"refgrader_{design}", [problem], admin_user)
    (task,) = execute_all(run)
    assert task.status == JobStatus.SUCCEEDED, task.error
    steps_prompt = (
        "refgrader_steps_approachability" if design in ("approachability", "hybrid") else None
    )
    users = fake_llm.prompts()
    assert len(users) == 5
    assert replies.CLUSTER in users[0]
    assert all(replies.STEPS in u for u in users[1:3])
    assert all(u.startswith("Design") for u in users[3:5])
    assert {replies.SOLUTION_A in u for u in users[1:3]} == {True, False}  # one per cluster
    assert replies.SOLUTION_A2 not in "".join(users[1:])  # not a representative
    if steps_prompt:
        assert "approachability on this scale" in users[1]
    scheme = task.scheme
    assert scheme.method == f"refgrader_{design}" and scheme.is_valid, scheme.validation
    assert totals(scheme) == {"A": "7", "B": "7"}
    structure = Scheme.from_dict(scheme.structure)
    assert structure.round_down is (design in ("milestones", "hybrid"))
    expected = 2 if design in ("approachability", "hybrid") else None
    assert {leaf.approachability for leaf in structure.leaves()} == {expected}
    assert {leaf.partial.value for leaf in structure.leaves()} == {"half"}
    assert [c["members"] for c in scheme.provenance["clusters"]] == [[1, 3], [2]]
    assert [s["step"] for s in scheme.provenance["steps"]] == [
        "cluster",
        "steps:C1",
        "steps:C2",
        "rubric:C1",
        "rubric:C2",
    ]
    assert GenerationStep.objects.filter(problem=problem).count() == 5

    second = start(endpoint, f"refgrader_{design}", [problem], admin_user)
    (again,) = execute_all(second)
    assert again.status == JobStatus.SUCCEEDED
    assert len(fake_llm.log) == 5  # every step came from the cache
    # the same text as version 1: no identical version is saved, the task points at it
    assert again.scheme == scheme and MarkingScheme.objects.filter(problem=problem).count() == 1
    second.refresh_from_db()
    assert second.prompt_tokens == 0 and second.status == JobStatus.SUCCEEDED


def test_fresh_run_calls_the_model_again_and_updates_the_cache(fake_llm, endpoint, admin_user):
    replies.script_proofbench(fake_llm)
    problem = problem_with_solutions(replies.SOLUTION_A)
    execute_all(start(endpoint, "proofbench", [problem], admin_user))
    execute_all(start(endpoint, "proofbench", [problem], admin_user, reuse_steps=False))
    assert len(fake_llm.log) == 2
    assert GenerationStep.objects.filter(problem=problem).count() == 1


def test_rate_limit_then_success(fake_llm, endpoint, admin_user):
    replies.script_proofbench(fake_llm, status(429, retry_after=0), text(replies.PROOFBENCH_SCHEME))
    run = start(endpoint, "proofbench", [problem_with_solutions("S")], admin_user)
    (task,) = execute_all(run)
    assert task.status == JobStatus.SUCCEEDED
    assert [e["status"] for e in fake_llm.log] == [429, 200]
    assert task.raw_responses[0]["attempts"] == 2


def test_server_errors_wait_for_a_job_retry_then_fail_with_the_raw_body(
    fake_llm, endpoint, admin_user
):
    replies.script_proofbench(fake_llm, status(500, message="upstream exploded"))
    run = start(endpoint, "proofbench", [problem_with_solutions("S")], admin_user)
    with pytest.raises(LLMTransientError):
        execute_all(run, final_attempt=False)
    task = run.tasks.get()
    assert task.status == JobStatus.RETRYING and "HTTP 500" in task.error
    run.refresh_from_db()
    assert run.status == JobStatus.RUNNING and run.failed_count == 0

    (task,) = execute_all(run, final_attempt=True)
    assert task.status == JobStatus.FAILED and task.attempts == 2
    assert "Step scheme" in task.error and "HTTP 500" in task.error
    assert "upstream exploded" in task.raw_responses[-1]["text"]
    assert task.scheme is None and not MarkingScheme.objects.exists()
    assert len(fake_llm.log) == 4  # two requests per attempt (endpoint.max_attempts)
    run.refresh_from_db()
    assert (run.status, run.failed_count) == (JobStatus.FAILED, 1)


def test_slow_reply_times_out_and_is_recorded(fake_llm, admin_user):
    endpoint = LLMEndpointFactory(base_url=fake_llm.base_url, timeout_seconds=0.3)
    replies.script_proofbench(fake_llm, slow(10))
    run = start(endpoint, "proofbench", [problem_with_solutions("S")], admin_user)
    (task,) = execute_all(run)
    assert task.status == JobStatus.FAILED
    assert "did not answer within the timeout" in task.error
    assert not MarkingScheme.objects.exists()


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (truncated(replies.PROOFBENCH_SCHEME, keep=0.3), "cut off at the token limit"),
        (text("I am sorry, but I cannot produce a rubric."), "no 'Checkpoints' section"),
        (unclosed_think("The checkpoints should be"), "(<think>) is never closed"),
        (text(replies.PROOFBENCH_SCHEME + "\nNote. " * 40_000), "over the limit of 200,000"),
        (
            text(replies.PROOFBENCH_SCHEME, finish_reason="length"),
            "cut off at the token limit",
        ),
    ],
)
def test_bad_output_is_recorded_with_its_raw_text_and_can_be_retried(
    fake_llm, endpoint, admin_user, bad, message, django_capture_on_commit_callbacks
):
    replies.script_proofbench(fake_llm, bad, text(replies.PROOFBENCH_SCHEME))
    run = start(endpoint, "proofbench", [problem_with_solutions("S")], admin_user)
    (task,) = execute_all(run)
    assert task.status == JobStatus.FAILED and message in task.error
    assert task.raw_responses[-1]["text"] == bad.text
    assert not GenerationStep.objects.exists()  # unusable output is never cached
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        generation.generation_task_retry(task=task)
    assert len(callbacks) == 1
    run.refresh_from_db()
    assert run.status == JobStatus.PENDING and run.failed_count == 0
    (task,) = execute_all(run)
    assert task.status == JobStatus.SUCCEEDED and task.attempts == 2 and task.scheme.is_valid
    with pytest.raises(ValidationError, match="Only a failed task"):
        generation.generation_task_retry(task=task)


def test_refgrader_failure_midway_keeps_finished_steps_for_the_retry(
    fake_llm, endpoint, admin_user
):
    fake_llm.on((replies.RUBRIC, "By Newton"), text("Points: some."), text("still no rubric"))
    replies.script_refgrader(fake_llm, "plain")
    run = start(endpoint, "refgrader_plain", [problem_with_solutions()], admin_user)
    (task,) = execute_all(run)
    assert task.status == JobStatus.FAILED
    assert task.error.startswith("Step rubric:C2:") and "could not be read" in task.error
    assert GenerationStep.objects.count() == 4
    assert not MarkingScheme.objects.exists()  # never a half-written scheme
    fake_llm.rules.pop(0)
    generation.generation_task_retry(task=task)
    (task,) = execute_all(run)
    assert task.status == JobStatus.SUCCEEDED
    assert len(fake_llm.log) == 6  # only the failed rubric was asked again


def test_a_readable_but_invalid_scheme_is_a_failed_task_never_a_version(
    fake_llm, endpoint, admin_user
):
    over = replies.PROOFBENCH_SCHEME.replace("[7 pts] Newton", "[8 pts] Newton")
    replies.script_proofbench(fake_llm, text(over))
    (task,) = execute_all(start(endpoint, "proofbench", [problem_with_solutions("S")], admin_user))
    assert task.status == JobStatus.FAILED and task.scheme is None
    assert "The scheme is not valid" in task.error and "8" in task.error
    assert task.raw_responses[-1]["text"] == over
    assert not MarkingScheme.objects.exists() and not GenerationStep.objects.exists()


def test_problem_without_reference_solution_fails_in_words(fake_llm, endpoint, admin_user):
    problem = problem_with_solutions("S")
    problem.reference_solutions.all().delete()
    (task,) = execute_all(start(endpoint, "refgrader_milestones", [problem], admin_user))
    assert task.status == JobStatus.FAILED
    assert f"{problem.external_id} has no reference solution" in task.error
    assert fake_llm.log == []


def test_a_done_task_runs_once(fake_llm, endpoint, admin_user):
    replies.script_proofbench(fake_llm)
    run = start(endpoint, "proofbench", [problem_with_solutions("S")], admin_user)
    (task,) = execute_all(run)
    assert as_job("scheme_generation", task.pk, lambda: 1 / 0) is None  # done: not run again
    again = generation.generation_task_execute(task_id=task.pk)
    assert again.scheme_id == task.scheme_id and again.attempts == 1
    assert MarkingScheme.objects.count() == 1 and len(fake_llm.log) == 1


def test_several_problems_each_get_a_task(fake_llm, endpoint, admin_user):
    replies.script_proofbench(fake_llm)
    problems = [problem_with_solutions(f"S{i}") for i in range(3)]
    run = start(endpoint, "proofbench", problems + problems[:1], admin_user)
    assert run.total == 3 and run.tasks.count() == 3
    execute_all(run)
    run.refresh_from_db()
    assert run.done_count == 3 and run.percent == 100
    with pytest.raises(ValidationError, match="at least one problem"):
        start(endpoint, "proofbench", [], admin_user)


def test_freezing_keeps_the_parameters_whatever_happens_to_the_endpoint(
    fake_llm, endpoint, admin_user
):
    replies.script_proofbench(fake_llm)
    config = GeneratorConfigFactory(endpoint=endpoint, method="proofbench")
    frozen = generation.generator_config_freeze(config=config, user=admin_user)
    assert frozen.is_frozen and frozen.frozen_parameters["model"] == "fake-model"
    with pytest.raises(ValidationError, match="already frozen"):
        generation.generator_config_freeze(config=frozen, user=admin_user)
    endpoint.model = "another-model"
    endpoint.temperature = 0.9
    endpoint.base_url = f"{endpoint.base_url}/"  # where it is served may change
    endpoint.save()
    run = generation.generation_run_start(
        config=GeneratorConfig.objects.get(pk=frozen.pk),
        problems=[problem_with_solutions("S")],
        user=admin_user,
    )
    (task,) = execute_all(run)
    assert run.parameters["base_url"] == endpoint.base_url
    assert fake_llm.log[0]["model"] == "fake-model"
    assert fake_llm.log[0]["params"]["temperature"] == 0.0
    assert task.scheme.provenance["config"]["frozen"] is True
    # the same method, prompt version and endpoint give the frozen configuration back
    again = generation.generator_config_get_or_create(
        method="proofbench", prompt_version="v1", endpoint=endpoint
    )
    assert again.pk == frozen.pk


def test_configuration_needs_a_known_method_and_prompt_version(endpoint):
    with pytest.raises(ValidationError, match="not a generation method"):
        generation.generator_config_get_or_create(
            method="manual", prompt_version="v1", endpoint=endpoint
        )
    with pytest.raises(ValidationError, match="No prompt version 'v7'"):
        generation.generator_config_get_or_create(
            method="refgrader_hybrid", prompt_version="v7", endpoint=endpoint
        )
    assert workflows.prompt_versions("refgrader_hybrid") == ["v1"]
    assert workflows.prompt_versions("refgrader_plain") == ["v1", "v2"]
    assert workflows.prompt_keys("refgrader_plain", "v2") == {
        "cluster": "refgrader_cluster@v1",  # steps v2 leaves as they were
        "steps": "refgrader_steps@v1",
        "rubric": "refgrader_rubric_plain@v2",
    }


def test_one_reference_solution_pays_for_no_clustering_call(fake_llm, endpoint, admin_user):
    replies.script_refgrader(fake_llm, "plain")
    problem = problem_with_solutions(replies.SOLUTION_B)
    (task,) = execute_all(start(endpoint, "refgrader_plain", [problem], admin_user))
    assert task.status == JobStatus.SUCCEEDED, task.error
    assert not any(replies.CLUSTER in u for u in fake_llm.prompts())
    assert len(fake_llm.log) == 2  # main steps, rubric
    (cluster,) = task.scheme.provenance["clusters"]
    assert cluster["members"] == [1] and cluster["chains"] == [0]
    assert [s["step"] for s in task.scheme.provenance["steps"]] == ["steps:C1", "rubric:C1"]


def test_plain_rubric_v2_has_the_topic_specific_phase(fake_llm, endpoint, admin_user):
    replies.script_refgrader(fake_llm, "plain")
    problem = problem_with_solutions(topic="G")
    config = generation.generator_config_get_or_create(
        method="refgrader_plain", prompt_version="v2", endpoint=endpoint, user=admin_user
    )
    run = generation.generation_run_start(config=config, problems=[problem], user=admin_user)
    (task,) = execute_all(run)
    assert task.status == JobStatus.SUCCEEDED, task.error
    rubric_prompts = [u for u in fake_llm.prompts() if u.startswith("Design")]
    assert len(rubric_prompts) == 2
    assert all("problem's topic (Geometry (G))" in u for u in rubric_prompts)
    assert "constructions and theorem applications" in rubric_prompts[0]
    assert task.scheme.provenance["prompts"]["rubric"] == "refgrader_rubric_plain@v2"


def test_the_job_retries_transient_errors_then_records_the_failure(fake_llm, endpoint, admin_user):
    """The Celery task itself, applied in-process: each try makes the client's own attempts;
    the job retries (MAX_RETRIES), and its last try records the failure."""
    from rubrics.tasks import MAX_RETRIES, generate_scheme, retry_countdown

    replies.script_proofbench(fake_llm, status(503))
    run = start(endpoint, "proofbench", [problem_with_solutions("S")], admin_user)
    task = run.tasks.get()
    generate_scheme.apply(args=[task.pk])
    task.refresh_from_db()
    assert task.status == JobStatus.FAILED and "HTTP 503" in task.error
    assert task.attempts == MAX_RETRIES + 1
    assert len(fake_llm.log) == (MAX_RETRIES + 1) * endpoint.max_attempts
    assert [retry_countdown(n) for n in range(3)] == [30, 60, 120]


def test_the_job_succeeds_when_the_provider_recovers(fake_llm, endpoint, admin_user):
    from rubrics.tasks import generate_scheme

    replies.script_proofbench(fake_llm, status(500), status(500), text(replies.PROOFBENCH_SCHEME))
    run = start(endpoint, "proofbench", [problem_with_solutions("S")], admin_user)
    task = run.tasks.get()
    generate_scheme.apply(args=[task.pk])
    task.refresh_from_db()
    assert task.status == JobStatus.SUCCEEDED and task.attempts == 2
    assert [e["status"] for e in fake_llm.log] == [500, 500, 200]


def test_a_job_that_cannot_be_queued_is_recorded_as_failed(
    endpoint, admin_user, dead_broker, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        run = start(endpoint, "proofbench", [problem_with_solutions("S")], admin_user)
    task = run.tasks.get()
    assert task.status == JobStatus.FAILED
    assert task.error.startswith("The job could not be queued")
    run.refresh_from_db()
    assert run.status == JobStatus.FAILED and run.failed_count == 1


def test_a_job_for_a_deleted_run_does_nothing(fake_llm, endpoint, admin_user):
    run = start(endpoint, "proofbench", [problem_with_solutions("S")], admin_user)
    task_id = run.tasks.get().pk
    run.delete()
    assert generation.generation_task_execute(task_id=task_id) is None
    assert fake_llm.log == []


def test_a_nul_character_in_a_reply_does_not_break_storage(fake_llm, endpoint, admin_user):
    noisy = replies.PROOFBENCH_SCHEME.replace("Set-up.", "Set-up.\x00")
    replies.script_proofbench(fake_llm, text(noisy))
    (task,) = execute_all(start(endpoint, "proofbench", [problem_with_solutions("S")], admin_user))
    assert task.status == JobStatus.SUCCEEDED and "\x00" not in task.scheme.text
    assert "\ufffd" in GenerationStep.objects.get().output


def test_a_problem_with_generated_schemes_can_be_deleted(fake_llm, endpoint, admin_user):
    replies.script_proofbench(fake_llm)
    problem = problem_with_solutions("S")
    run = start(endpoint, "proofbench", [problem], admin_user)
    execute_all(run)
    problem.delete()
    assert not MarkingScheme.objects.exists() and not run.tasks.exists()


def test_deleting_a_generated_scheme_keeps_the_task_record(fake_llm, endpoint, admin_user):
    replies.script_proofbench(fake_llm)
    (task,) = execute_all(start(endpoint, "proofbench", [problem_with_solutions("S")], admin_user))
    task.scheme.delete()
    task.refresh_from_db()
    assert task.status == JobStatus.SUCCEEDED and task.scheme is None
