"""Generating marking schemes with a language model: endpoints, configurations (frozen ones
keep their parameters), runs over a selection of problems, one Celery job per problem.

A problem's scheme version is created in one transaction at the very end (never half-written),
with provenance: model, prompt versions, parameters, token usage, the steps used. Failures are
recorded on the `GenerationTask` with the raw replies, and can be retried. The steps of each
method live in `rubrics.workflows`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from jobs.services import job_send_on_commit
from llm import parsers, prompts
from llm.client import LLMClient, LLMError, LLMTransientError, Usage
from problems.models import Problem
from rubrics.models import (
    GENERATION_METHODS,
    GenerationRun,
    GenerationTask,
    GeneratorConfig,
    JobStatus,
    LLMEndpoint,
    MarkingScheme,
)
from rubrics.services import scheme_version_create
from rubrics.workflows import (
    GeneratedScheme,
    GenerationError,
    Workflow,
    endpoint_parameters,
    llm_config,
    prompt_keys,
    prompt_versions,
)


def config_parameters(config: GeneratorConfig) -> dict:
    """A frozen configuration's own model and parameters (reached at its endpoint's current base
    URL: where the model is served may move, what it is may not), else the endpoint's current
    ones."""
    current = endpoint_parameters(config.endpoint)
    if not config.is_frozen:
        return current
    return {**config.frozen_parameters, "base_url": current["base_url"]}


def settings_endpoint_available() -> bool:
    """LLM_BASE_URL and LLM_MODEL are set: an endpoint can be made from the settings."""
    return bool(getattr(settings, "LLM_BASE_URL", "") and getattr(settings, "LLM_MODEL", ""))


@transaction.atomic
def llm_endpoint_from_settings() -> LLMEndpoint:
    """The endpoint named "settings": LLM_BASE_URL and LLM_MODEL, its key in LLM_API_KEY."""
    if not settings_endpoint_available():
        raise ValidationError("Set LLM_BASE_URL and LLM_MODEL first (see the README).")
    endpoint, _ = LLMEndpoint.objects.update_or_create(
        name="settings",
        defaults={
            "base_url": settings.LLM_BASE_URL,
            "model": settings.LLM_MODEL,
            "api_key_env": "LLM_API_KEY",
        },
    )
    return endpoint


CHECK_PROMPT = "This is a connection check. Reply with the single word: ready"
CHECK_TIMEOUT = 60.0


def llm_endpoint_check(*, endpoint: LLMEndpoint) -> str:
    """One short request to the endpoint (a single attempt); what it answered, in words.
    Raises LLMError when it does not answer."""
    config = llm_config(endpoint, endpoint_parameters(endpoint))
    config = replace(config, max_attempts=1, timeout=min(config.timeout, CHECK_TIMEOUT))
    completion = LLMClient(config).complete([{"role": "user", "content": CHECK_PROMPT}])
    reply = parsers.visible(completion.text)[:80] or "(an empty reply)"
    return (
        f"{endpoint.name} answered {reply!r} as {completion.model} "
        f"({completion.usage.total_tokens} tokens)."
    )


@transaction.atomic
def generator_config_get_or_create(
    *, method: str, prompt_version: str, endpoint: LLMEndpoint, user: User | None = None
) -> GeneratorConfig:
    """The configuration for this method, prompt version and endpoint (a frozen one first)."""
    if method not in dict(GENERATION_METHODS):
        raise ValidationError({"method": f"{method!r} is not a generation method."})
    if prompt_version not in prompt_versions(method):
        raise ValidationError(
            {
                "prompt_version": f"No prompt version {prompt_version!r} for {method}: "
                f"available {', '.join(prompt_versions(method)) or 'none'}."
            }
        )
    existing = (
        GeneratorConfig.objects.filter(
            method=method, prompt_version=prompt_version, endpoint=endpoint
        )
        .order_by("frozen_at", "id")
        .last()
    )
    if existing is not None:
        return existing
    return GeneratorConfig.objects.create(
        name=f"{method} {prompt_version} on {endpoint.name}",
        method=method,
        prompt_version=prompt_version,
        endpoint=endpoint,
        created_by=user,
    )


@transaction.atomic
def generator_config_freeze(*, config: GeneratorConfig, user: User) -> GeneratorConfig:
    """Freezes the configuration with its endpoint's current model and parameters: from now on
    it never changes, and every run with it uses those parameters."""
    config = (
        GeneratorConfig.objects.select_for_update().select_related("endpoint").get(pk=config.pk)
    )
    if config.is_frozen:
        raise ValidationError(f"“{config.name}” is already frozen.")
    config.frozen_at = timezone.now()
    config.frozen_by = user
    config.frozen_parameters = endpoint_parameters(config.endpoint)
    config.save(update_fields=["frozen_at", "frozen_by", "frozen_parameters"])
    return config


# --- Runs -----------------------------------------------------------------------------------


@transaction.atomic
def generation_run_start(
    *,
    config: GeneratorConfig,
    problems: Iterable[Problem],
    user: User | None = None,
    reuse_steps: bool = True,
) -> GenerationRun:
    """A run over the problems: one task row per problem, one Celery job each once committed."""
    problem_ids = sorted({problem.pk for problem in problems})
    if not problem_ids:
        raise ValidationError({"problems": "Choose at least one problem."})
    run = GenerationRun.objects.create(
        config=config,
        method=config.method,
        prompt_version=config.prompt_version,
        parameters=config_parameters(config),
        reuse_steps=reuse_steps,
        total=len(problem_ids),
        created_by=user,
    )
    tasks = GenerationTask.objects.bulk_create(
        GenerationTask(run=run, problem_id=problem_id) for problem_id in problem_ids
    )
    job_send_on_commit("scheme_generation", [task.pk for task in tasks], unqueued=_unqueued)
    return run


@transaction.atomic
def generation_task_retry(*, task: GenerationTask) -> GenerationTask:
    """Puts a failed task back in the queue (a new job; cached steps are reused)."""
    task = GenerationTask.objects.select_for_update().get(pk=task.pk)
    if task.status != JobStatus.FAILED:
        raise ValidationError(f"Only a failed task can be retried; this one is {task.status}.")
    task.status = JobStatus.PENDING
    task.error = ""
    task.finished_at = None
    task.save(update_fields=["status", "error", "finished_at", "updated_at"])
    _run_refresh(task.run_id)
    job_send_on_commit("scheme_generation", [task.pk], unqueued=_unqueued)
    return task


@transaction.atomic
def generation_run_retry_failed(*, run: GenerationRun) -> int:
    """Retries every failed task of the run; returns how many."""
    failed = list(run.tasks.filter(status=JobStatus.FAILED))
    for task in failed:
        generation_task_retry(task=task)
    return len(failed)


@transaction.atomic
def _unqueued(pk: int, reason: str) -> None:
    generation_task_unqueued(task_id=pk, reason=reason)


def generation_task_unqueued(*, task_id: int, reason: str) -> None:
    task = GenerationTask.objects.select_for_update().get(pk=task_id)
    if task.status != JobStatus.PENDING:
        return
    task.status = JobStatus.FAILED
    task.error = reason[:1].upper() + reason[1:]
    task.finished_at = timezone.now()
    task.save(update_fields=["status", "error", "finished_at", "updated_at"])
    _run_refresh(task.run_id)


@transaction.atomic
def generation_task_fail(*, task_id: int, reason: str) -> None:
    """Records a failure outside the workflow's own (its worker kept dying), to retry from the
    page."""
    task = GenerationTask.objects.select_for_update().get(pk=task_id)
    if task.status in (JobStatus.SUCCEEDED, JobStatus.FAILED):
        return
    task.status = JobStatus.FAILED
    task.error = reason
    task.finished_at = timezone.now()
    task.save(update_fields=["status", "error", "finished_at", "updated_at"])
    _run_refresh(task.run_id)


def _run_refresh(run_id: int) -> GenerationRun:
    """Recounts the run's tasks and tokens under a lock on the run row."""
    run = GenerationRun.objects.select_for_update().get(pk=run_id)
    counts = run.tasks.aggregate(
        done=Count("id", filter=Q(status=JobStatus.SUCCEEDED)),
        failed=Count("id", filter=Q(status=JobStatus.FAILED)),
        started=Count("id", filter=~Q(status=JobStatus.PENDING)),
        total=Count("id"),
    )
    usage = Usage()
    for value in run.tasks.values_list("usage", flat=True):
        usage = usage + Usage.from_dict(value)
    run.total = counts["total"]
    run.done_count = counts["done"]
    run.failed_count = counts["failed"]
    run.prompt_tokens = usage.prompt_tokens
    run.completion_tokens = usage.completion_tokens
    if counts["done"] + counts["failed"] == counts["total"]:
        run.status = JobStatus.FAILED if counts["failed"] else JobStatus.SUCCEEDED
        run.finished_at = run.finished_at or timezone.now()
    else:
        run.status = JobStatus.RUNNING if counts["started"] else JobStatus.PENDING
        run.finished_at = None
    run.save()
    return run


# --- One problem ----------------------------------------------------------------------------


def generation_task_execute(*, task_id: int, final_attempt: bool = True) -> GenerationTask | None:
    """Runs one problem's generation. Idempotent: a task already done (or deleted with its run)
    is left as it is, and the scheme is created at most once. A transient provider error is
    re-raised (for the job to retry later) unless this is the final attempt; every other
    failure is recorded."""
    with transaction.atomic():
        task = GenerationTask.objects.select_for_update().filter(pk=task_id).first()
        if task is None or task.status == JobStatus.SUCCEEDED:
            return task
        task.status = JobStatus.RUNNING
        task.started_at = timezone.now()
        task.error = ""
        task.raw_responses = []
        task.save(update_fields=["status", "started_at", "error", "raw_responses"])
        _run_refresh(task.run_id)
    task = GenerationTask.objects.select_related("run__config__endpoint", "problem").get(pk=task_id)
    workflow = Workflow(task)
    try:
        result = workflow.run()
    except LLMTransientError as exc:
        if not final_attempt:
            _task_record(task, workflow, JobStatus.RETRYING, _failure_text(exc, workflow))
            raise
        _task_record(task, workflow, JobStatus.FAILED, _failure_text(exc, workflow))
    except (LLMError, parsers.OutputError, GenerationError, prompts.PromptError) as exc:
        _task_record(task, workflow, JobStatus.FAILED, _failure_text(exc, workflow))
    except Exception as exc:
        # a bug, not the model: the row says so (the page must not show "running" forever)
        message = f"Unexpected error ({type(exc).__name__}): {exc}"
        _task_record(task, workflow, JobStatus.FAILED, _failure_text(Exception(message), workflow))
        raise
    else:
        _task_finish(task, workflow, result)
    return GenerationTask.objects.get(pk=task_id)


def _failure_text(exc: Exception, workflow: Workflow) -> str:
    step = f"Step {workflow.current_step}: " if workflow.current_step else ""
    return f"{step}{exc}"


def _task_record(task: GenerationTask, workflow: Workflow, status: str, error: str) -> None:
    with transaction.atomic():
        locked = GenerationTask.objects.select_for_update().get(pk=task.pk)
        if locked.status == JobStatus.SUCCEEDED:
            return
        locked.status = status
        locked.error = error
        locked.raw_responses = workflow.calls
        locked.usage = (Usage.from_dict(locked.usage) + workflow.new_usage).to_dict()
        locked.finished_at = timezone.now() if status == JobStatus.FAILED else None
        locked.save()
        _run_refresh(locked.run_id)


def _task_finish(task: GenerationTask, workflow: Workflow, result: GeneratedScheme) -> None:
    """The scheme version and the task's success, in one transaction. A scheme with the same
    text as an existing version of the problem (all steps from the cache) is not saved again:
    the task points at that version."""
    with transaction.atomic():
        locked = GenerationTask.objects.select_for_update().get(pk=task.pk)
        if locked.scheme_id is not None:
            return
        Problem.objects.select_for_update().only("id").get(pk=task.problem_id)
        same = (
            MarkingScheme.objects.filter(problem_id=task.problem_id, text=result.text)
            .order_by("version")
            .first()
        )
        if same is not None:
            _task_done(locked, workflow, same)
            return
        run = task.run
        provenance = {
            "generator": "proofmark",
            "method": run.method,
            "config": {
                "id": run.config_id,
                "name": run.config.name,
                "frozen": run.config.is_frozen,
            },
            "run": run.pk,
            "model": run.parameters.get("model"),
            "endpoint": run.parameters.get("endpoint"),
            "prompt_version": run.prompt_version,
            "prompts": prompt_keys(run.method, run.prompt_version),
            "parameters": {
                key: run.parameters.get(key) for key in ("temperature", "max_tokens", "extra")
            },
            "token_usage": workflow.all_usage.to_dict(),
            "token_usage_this_run": workflow.new_usage.to_dict(),
            "steps": workflow.steps_used,
            **result.provenance,
        }
        scheme = scheme_version_create(
            problem=task.problem,
            text=result.text,
            method=run.method,
            fmt=result.fmt,
            provenance=provenance,
            created_by=run.created_by,
        )
        _task_done(locked, workflow, scheme)


def _task_done(locked: GenerationTask, workflow: Workflow, scheme: MarkingScheme) -> None:
    locked.scheme = scheme
    locked.status = JobStatus.SUCCEEDED
    locked.error = ""
    locked.raw_responses = workflow.calls
    locked.usage = (Usage.from_dict(locked.usage) + workflow.new_usage).to_dict()
    locked.finished_at = timezone.now()
    locked.save()
    _run_refresh(locked.run_id)
