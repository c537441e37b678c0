"""Generating marking schemes with a language model: configurations, runs, one job per problem.

Methods (GeneratorConfig.method):
- `proofbench`: one call, problem + official solution(s) -> ProofBench's three sections.
- `refgrader_<design>` (plain, approachability, milestones, hybrid): cluster the reference
  solutions by their main steps -> analyse each cluster's representative into main steps and
  sub-steps (with approachability 1-5 for the approachability and hybrid designs) -> design a
  7-point rubric per cluster -> the rubrics become the parallel chains of one scheme.

Every model call is one workflow step stored as a `GenerationStep` keyed by problem, step,
prompt, model and a hash of the rendered messages and parameters: none of these steps depends
on a student proof, so a later run reuses them (unless the run asks for fresh calls). A
problem's scheme version is created in one transaction at the very end (never half-written),
with provenance: model, prompt versions, parameters, token usage, the steps used.
Failures are recorded on the `GenerationTask` with the raw replies, and can be retried.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from llm import parsers, prompts
from llm.client import Completion, LLMClient, LLMConfig, LLMError, LLMTransientError, Usage
from problems.models import Problem, ReferenceSolution

from .models import (
    GENERATION_METHODS,
    GenerationRun,
    GenerationStep,
    GenerationTask,
    GeneratorConfig,
    LLMEndpoint,
    RunStatus,
    SchemeMethod,
    TaskStatus,
)
from .services import scheme_version_create
from .structure import (
    parse_proofbench,
    parse_refgrader,
    parse_refgrader_clusters,
    scheme_to_markdown,
)

MAX_CLUSTERS = 6
APPROACHABILITY_DESIGNS = ("approachability", "hybrid")


class GenerationError(Exception):
    """A problem cannot be generated as asked (no reference solution, unreadable output...)."""


# --- Endpoints and configurations ----------------------------------------------------------


def endpoint_api_key(endpoint: LLMEndpoint) -> str:
    """The key from the environment variable the endpoint names, else a setting of that name."""
    name = endpoint.api_key_env.strip()
    if not name:
        return ""
    value = os.environ.get(name) or getattr(settings, name, "")
    return value if isinstance(value, str) else ""


def endpoint_parameters(endpoint: LLMEndpoint) -> dict:
    """What shapes the output: kept on a frozen configuration, on runs and in provenance."""
    return {
        "endpoint": endpoint.name,
        "base_url": endpoint.base_url,
        "model": endpoint.model,
        "temperature": endpoint.temperature,
        "max_tokens": endpoint.max_tokens,
        "extra": endpoint.extra or {},
    }


def config_parameters(config: GeneratorConfig) -> dict:
    """A frozen configuration's own parameters, else the endpoint's current ones."""
    return (
        dict(config.frozen_parameters) if config.is_frozen else endpoint_parameters(config.endpoint)
    )


def llm_config(endpoint: LLMEndpoint, parameters: dict) -> LLMConfig:
    return LLMConfig(
        base_url=parameters["base_url"],
        model=parameters["model"],
        api_key=endpoint_api_key(endpoint),
        temperature=parameters.get("temperature"),
        max_tokens=parameters.get("max_tokens"),
        timeout=endpoint.timeout_seconds,
        concurrency=endpoint.concurrency,
        max_attempts=endpoint.max_attempts,
        backoff_base=float(getattr(settings, "LLM_BACKOFF_SECONDS", 2.0)),
        extra=parameters.get("extra") or {},
    )


def method_design(method: str) -> str | None:
    return method.removeprefix("refgrader_") if method.startswith("refgrader_") else None


def prompt_keys(method: str, version: str) -> dict[str, str]:
    """The template of each step of a method, at one prompt version."""
    design = method_design(method)
    if method == SchemeMethod.PROOFBENCH:
        return {"scheme": f"proofbench_scheme@{version}"}
    if design is None:
        raise ValidationError({"method": f"{method!r} is not a generation method."})
    steps = (
        "refgrader_steps_approachability"
        if design in APPROACHABILITY_DESIGNS
        else ("refgrader_steps")
    )
    return {
        "cluster": f"refgrader_cluster@{version}",
        "steps": f"{steps}@{version}",
        "rubric": f"refgrader_rubric_{design}@{version}",
    }


def prompt_versions(method: str) -> list[str]:
    """The prompt versions for which every step of the method has a template."""
    available = set(prompts.available())
    candidates = {key.partition("@")[2] for key in available}
    return sorted(
        version
        for version in candidates
        if all(key in available for key in prompt_keys(method, version).values())
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
    _enqueue_on_commit([task.pk for task in tasks])
    return run


@transaction.atomic
def generation_task_retry(*, task: GenerationTask) -> GenerationTask:
    """Puts a failed task back in the queue (a new job; cached steps are reused)."""
    task = GenerationTask.objects.select_for_update().get(pk=task.pk)
    if task.status != TaskStatus.FAILED:
        raise ValidationError(f"Only a failed task can be retried; this one is {task.status}.")
    task.status = TaskStatus.PENDING
    task.error = ""
    task.finished_at = None
    task.save(update_fields=["status", "error", "finished_at", "updated_at"])
    _run_refresh(task.run_id)
    _enqueue_on_commit([task.pk])
    return task


@transaction.atomic
def generation_run_retry_failed(*, run: GenerationRun) -> int:
    """Retries every failed task of the run; returns how many."""
    failed = list(run.tasks.filter(status=TaskStatus.FAILED))
    for task in failed:
        generation_task_retry(task=task)
    return len(failed)


def _enqueue_on_commit(task_ids: Sequence[int]) -> None:
    from .tasks import generate_scheme

    def send() -> None:
        for task_id in task_ids:
            generate_scheme.delay(task_id)

    transaction.on_commit(send)


def _run_refresh(run_id: int) -> GenerationRun:
    """Recounts the run's tasks and tokens under a lock on the run row."""
    run = GenerationRun.objects.select_for_update().get(pk=run_id)
    counts = run.tasks.aggregate(
        done=Count("id", filter=Q(status=TaskStatus.DONE)),
        failed=Count("id", filter=Q(status=TaskStatus.FAILED)),
        started=Count("id", filter=~Q(status=TaskStatus.PENDING)),
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
        run.status = RunStatus.FAILED if counts["failed"] else RunStatus.DONE
        run.finished_at = run.finished_at or timezone.now()
    else:
        run.status = RunStatus.RUNNING if counts["started"] else RunStatus.PENDING
        run.finished_at = None
    run.save()
    return run


# --- One problem ----------------------------------------------------------------------------


def generation_task_execute(*, task_id: int, final_attempt: bool = True) -> GenerationTask:
    """Runs one problem's generation. Idempotent: a task already done is left as it is, and the
    scheme is created at most once. A transient provider error is re-raised (for the job to
    retry later) unless this is the final attempt; every other failure is recorded."""
    with transaction.atomic():
        task = GenerationTask.objects.select_for_update().get(pk=task_id)
        if task.status == TaskStatus.DONE:
            return task
        task.status = TaskStatus.RUNNING
        task.attempts += 1
        task.started_at = timezone.now()
        task.error = ""
        task.raw_responses = []
        task.save(update_fields=["status", "attempts", "started_at", "error", "raw_responses"])
        _run_refresh(task.run_id)
    task = GenerationTask.objects.select_related("run__config__endpoint", "problem").get(pk=task_id)
    workflow = Workflow(task)
    try:
        result = workflow.run()
    except LLMTransientError as exc:
        if not final_attempt:
            _task_record(task, workflow, TaskStatus.RETRYING, _failure_text(exc, workflow))
            raise
        _task_record(task, workflow, TaskStatus.FAILED, _failure_text(exc, workflow))
    except (LLMError, parsers.OutputError, GenerationError, prompts.PromptError) as exc:
        _task_record(task, workflow, TaskStatus.FAILED, _failure_text(exc, workflow))
    else:
        _task_finish(task, workflow, result)
    return GenerationTask.objects.get(pk=task_id)


def _failure_text(exc: Exception, workflow: Workflow) -> str:
    step = f"Step {workflow.current_step}: " if workflow.current_step else ""
    return f"{step}{exc}"


def _task_record(task: GenerationTask, workflow: Workflow, status: str, error: str) -> None:
    with transaction.atomic():
        locked = GenerationTask.objects.select_for_update().get(pk=task.pk)
        if locked.status == TaskStatus.DONE:
            return
        locked.status = status
        locked.error = error
        locked.raw_responses = workflow.calls
        locked.usage = (Usage.from_dict(locked.usage) + workflow.new_usage).to_dict()
        locked.finished_at = timezone.now() if status == TaskStatus.FAILED else None
        locked.save()
        _run_refresh(locked.run_id)


def _task_finish(task: GenerationTask, workflow: Workflow, result: GeneratedScheme) -> None:
    """The scheme version and the task's success, in one transaction."""
    with transaction.atomic():
        locked = GenerationTask.objects.select_for_update().get(pk=task.pk)
        if locked.scheme_id is not None:
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
        locked.scheme = scheme
        locked.status = TaskStatus.DONE
        locked.error = ""
        locked.raw_responses = workflow.calls
        locked.usage = (Usage.from_dict(locked.usage) + workflow.new_usage).to_dict()
        locked.finished_at = timezone.now()
        locked.save()
        _run_refresh(locked.run_id)


@dataclass
class GeneratedScheme:
    text: str
    fmt: str
    provenance: dict = field(default_factory=dict)


@dataclass
class StepCall:
    step: str
    prompt: str
    fields: dict
    parse: Callable[[str], object]


class Workflow:
    """The steps of one problem's generation, each answered from the cache or by the model."""

    def __init__(self, task: GenerationTask):
        self.task = task
        self.job = task.run
        self.problem = task.problem
        self.config = llm_config(self.job.config.endpoint, self.job.parameters)
        self.keys = prompt_keys(self.job.method, self.job.prompt_version)
        self.calls: list[dict] = []
        self.steps_used: list[dict] = []
        self.new_usage = Usage()
        self.all_usage = Usage()
        self.current_step = ""
        self._client: LLMClient | None = None

    @property
    def client(self) -> LLMClient:
        if self._client is None:
            self._client = LLMClient(self.config)
        return self._client

    def run(self) -> GeneratedScheme:
        solutions = list(
            ReferenceSolution.objects.filter(problem=self.problem).order_by("id").only("text")
        )
        if not solutions:
            raise GenerationError(
                f"{self.problem.external_id} has no reference solution: scheme generation "
                "builds on the official solution. Import one first."
            )
        if self.job.method == SchemeMethod.PROOFBENCH:
            return self._proofbench(solutions)
        return self._refgrader(solutions, method_design(self.job.method))

    # ProofBench: one call.
    def _proofbench(self, solutions: list[ReferenceSolution]) -> GeneratedScheme:
        solution = (
            solutions[0].text
            if len(solutions) == 1
            else "\n\n".join(
                f"#### Solution {index}\n\n{s.text}" for index, s in enumerate(solutions, 1)
            )
        )
        ((text, _),) = self.call_many(
            [
                StepCall(
                    "scheme",
                    self.keys["scheme"],
                    {"problem": self.problem.statement, "solution": solution},
                    _read_proofbench,
                )
            ]
        )
        return GeneratedScheme(parsers.scheme_sections(text).text, "proofbench_markdown")

    # RefGrader: cluster -> main steps per cluster -> rubric per cluster -> chains.
    def _refgrader(self, solutions: list[ReferenceSolution], design: str) -> GeneratedScheme:
        numbered = "\n\n".join(
            f"#### Solution {index}\n\n{s.text}" for index, s in enumerate(solutions, 1)
        )
        ((_, found),) = self.call_many(
            [
                StepCall(
                    "cluster",
                    self.keys["cluster"],
                    {
                        "problem": self.problem.statement,
                        "solutions": numbered,
                        "count": str(len(solutions)),
                    },
                    lambda text: {
                        "clusters": [asdict(c) for c in parsers.clusters(text, len(solutions))]
                    },
                )
            ]
        )
        clusters = found["clusters"][:MAX_CLUSTERS]
        representatives = [solutions[c["representative"] - 1].text for c in clusters]
        rated = design in APPROACHABILITY_DESIGNS
        analyses = self.call_many(
            [
                StepCall(
                    f"steps:{cluster['label']}",
                    self.keys["steps"],
                    {"problem": self.problem.statement, "solution": solution},
                    lambda text: {
                        "main_steps": [
                            asdict(s) for s in parsers.main_steps(text, approachability=rated)
                        ]
                    },
                )
                for cluster, solution in zip(clusters, representatives, strict=True)
            ]
        )
        rubrics = self.call_many(
            [
                StepCall(
                    f"rubric:{cluster['label']}",
                    self.keys["rubric"],
                    {
                        "problem": self.problem.statement,
                        "solution": solution,
                        "analysis": parsers.unfence(analysis),
                    },
                    lambda text: _read_rubric(text, design),
                )
                for cluster, solution, (analysis, _) in zip(
                    clusters, representatives, analyses, strict=True
                )
            ]
        )
        self.current_step = "joining the rubrics"
        texts = [parsers.unfence(text) for text, _ in rubrics]
        scheme, messages = parse_refgrader_clusters(texts, design)
        if scheme is None:
            raise parsers.OutputError(
                "No rubric could be read: " + "; ".join(m.text for m in messages)
            )
        return GeneratedScheme(
            scheme_to_markdown(scheme),
            f"refgrader_{design}",
            {
                "clusters": [
                    {
                        "label": c["label"],
                        "members": c["members"],
                        "representative": c["representative"],
                        "main_steps": c["main_steps"],
                    }
                    for c in clusters
                ],
                "rubrics": texts,
            },
        )

    def call_many(self, calls: Sequence[StepCall]) -> list[tuple[str, dict]]:
        """Each step's (output text, parsed value): from the cache when allowed, else from the
        model (the missing ones together, at most the endpoint's concurrency at once)."""
        prepared = []
        for call in calls:
            messages = prompts.render(call.prompt, **call.fields)
            prepared.append((call, messages, _input_hash(messages, self.job.parameters)))
        results: dict[int, tuple[str, dict]] = {}
        missing = []
        for index, (call, _, digest) in enumerate(prepared):
            cached = self._cached(call, digest)
            if cached is not None:
                results[index] = (cached.output, cached.parsed)
                self._used(call, cached, cached=True)
            else:
                missing.append(index)
        if missing:
            self.current_step = ", ".join(prepared[i][0].step for i in missing)
            batch = [prepared[i][1] for i in missing]
            replies = [self._one(batch[0])] if len(batch) == 1 else self.client.complete_many(batch)
            for index, reply in zip(missing, replies, strict=True):
                call, _, digest = prepared[index]
                self.current_step = call.step
                results[index] = self._store(call, digest, reply)
        self.current_step = ""
        return [results[index] for index in range(len(prepared))]

    def _one(self, messages) -> Completion | LLMError:
        try:
            return self.client.complete(messages)
        except LLMError as exc:
            return exc

    def _cached(self, call: StepCall, digest: str) -> GenerationStep | None:
        if not self.job.reuse_steps:
            return None
        return GenerationStep.objects.filter(
            problem=self.problem,
            step=call.step,
            prompt=call.prompt,
            model=self.config.model,
            input_hash=digest,
        ).first()

    def _store(self, call: StepCall, digest: str, reply: Completion | LLMError) -> tuple[str, dict]:
        if isinstance(reply, LLMError):
            self.calls.append(
                {
                    "step": call.step,
                    "prompt": call.prompt,
                    "error": str(reply),
                    "status": reply.status,
                    "attempts": reply.attempts,
                    "text": reply.raw,
                }
            )
            raise reply
        self.new_usage = self.new_usage + reply.usage
        self.calls.append(
            {
                "step": call.step,
                "prompt": call.prompt,
                "text": reply.text,
                "finish_reason": reply.finish_reason,
                "attempts": reply.attempts,
                "usage": reply.usage.to_dict(),
            }
        )
        if reply.truncated:
            raise parsers.OutputError(
                "the reply was cut off at the token limit (finish_reason 'length'); "
                "raise max_tokens on the endpoint or retry."
            )
        if not reply.text.strip():
            raise parsers.OutputError("the reply is empty.")
        parsed = call.parse(reply.text)
        step, _ = GenerationStep.objects.update_or_create(
            problem=self.problem,
            step=call.step,
            prompt=call.prompt,
            model=self.config.model,
            input_hash=digest,
            defaults={"output": reply.text, "parsed": parsed, "usage": reply.usage.to_dict()},
        )
        self._used(call, step, cached=False)
        return reply.text, parsed

    def _used(self, call: StepCall, step: GenerationStep, *, cached: bool) -> None:
        self.all_usage = self.all_usage + Usage.from_dict(step.usage)
        self.steps_used.append(
            {"step": call.step, "prompt": call.prompt, "id": step.pk, "cached": cached}
        )


def _input_hash(messages: list[dict], parameters: dict) -> str:
    shaping = {key: parameters.get(key) for key in ("model", "temperature", "max_tokens", "extra")}
    payload = json.dumps({"messages": messages, "parameters": shaping}, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()


def _read_proofbench(text: str) -> dict:
    sections = parsers.scheme_sections(text)
    scheme, messages = parse_proofbench(sections.text)
    if scheme is None:
        raise parsers.OutputError(
            "The scheme could not be read: " + "; ".join(m.text for m in messages)
        )
    return {"chains": len(scheme.chains), "checkpoints": len(scheme.leaves())}


def _read_rubric(text: str, design: str) -> dict:
    scheme, messages = parse_refgrader(parsers.unfence(text), design)
    if scheme is None:
        raise parsers.OutputError(
            "The rubric could not be read: " + "; ".join(m.text for m in messages)
        )
    return {"checkpoints": len(scheme.leaves())}
