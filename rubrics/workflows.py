"""How a scheme is generated: the steps of each method, each answered from the step cache or by
the model, and what a step's reply must hold.

- `proofbench`: one call, problem + official solution(s) -> ProofBench's three sections.
- `refgrader_<design>` (plain, approachability, milestones, hybrid): cluster the reference
  solutions by their main steps -> analyse each cluster's representative into main steps and
  sub-steps (with approachability 1-5 for the approachability and hybrid designs) -> design a
  7-point rubric per cluster -> the rubrics become the parallel chains of one scheme.

Every model call is a `GenerationStep` keyed by problem, step, prompt, model and a hash of the
rendered messages and parameters: none depends on a student proof, so a later run reuses them
(unless the run asks for fresh calls). The services in `rubrics.generation` run a `Workflow`
and store its result.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field

from django.conf import settings
from django.core.exceptions import ValidationError

from llm import parsers, prompts
from llm.client import Completion, LLMClient, LLMConfig, LLMError, Usage
from problems.models import Problem, ReferenceSolution

from .models import GenerationStep, GenerationTask, LLMEndpoint, SchemeMethod
from .structure import (
    Message,
    has_errors,
    parse_proofbench,
    parse_refgrader,
    parse_refgrader_clusters,
    parse_scheme,
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
    """The template of each step of a method at one prompt version: for each step, its newest
    template at or before that version (v2 of a method may renew only some of its steps)."""
    design = method_design(method)
    if method == SchemeMethod.PROOFBENCH:
        names = {"scheme": "proofbench_scheme"}
    elif design is None:
        raise ValidationError({"method": f"{method!r} is not a generation method."})
    else:
        rated = design in APPROACHABILITY_DESIGNS
        names = {
            "cluster": "refgrader_cluster",
            "steps": "refgrader_steps_approachability" if rated else "refgrader_steps",
            "rubric": f"refgrader_rubric_{design}",
        }
    keys = {}
    for step, name in names.items():
        older = [v for v in prompts.versions(name) if _version_order(v) <= _version_order(version)]
        keys[step] = f"{name}@{max(older, key=_version_order) if older else version}"
    return keys


def prompt_versions(method: str) -> list[str]:
    """The prompt versions of a method: those at which one of its steps has a template of its
    own, and every step has one at or before it."""
    available = set(prompts.available())
    candidates = {key.partition("@")[2] for key in available}
    return sorted(
        (
            version
            for version in candidates
            if all(key in available for key in prompt_keys(method, version).values())
            and any(key.endswith(f"@{version}") for key in prompt_keys(method, version).values())
        ),
        key=_version_order,
    )


def _version_order(version: str) -> tuple[int, str]:
    number = version.removeprefix("v")
    return (int(number), "") if number.isdigit() else (0, version)


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
        """The scheme, valid: a reply that does not make a valid scheme raises OutputError."""
        solutions = list(
            ReferenceSolution.objects.filter(problem=self.problem).order_by("id").only("text")
        )
        if not solutions:
            raise GenerationError(
                f"{self.problem.external_id} has no reference solution: scheme generation "
                "builds on the official solution. Import one first."
            )
        if self.job.method == SchemeMethod.PROOFBENCH:
            result = self._proofbench(solutions)
        else:
            result = self._refgrader(solutions, method_design(self.job.method))
        self.current_step = "checking the scheme"
        parsed = parse_scheme(result.text, result.fmt, problem_id=self.problem.external_id)
        if not parsed.is_valid:
            raise parsers.OutputError("The scheme is not valid: " + _errors(parsed.messages))
        self.current_step = ""
        return result

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
        if len(solutions) == 1:  # one solution is its own cluster: no call to find that out
            alone = {"label": "C1", "main_steps": [], "members": [1], "representative": 1}
            found = {"clusters": [alone]}
        else:
            numbered = "\n\n".join(
                f"#### Solution {index}\n\n{s.text}" for index, s in enumerate(solutions, 1)
            )
            texts = [s.text for s in solutions]
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
                            "clusters": [asdict(c) for c in parsers.clusters(text, texts)]
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
        # a rubric template with a topic-specific phase is told the problem's topic
        topic = (
            {"topic": _topic(self.problem)}
            if "topic" in prompts.get(self.keys["rubric"]).fields
            else {}
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
                        **topic,
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
                        "representative_id": solutions[c["representative"] - 1].pk,
                        "main_steps": c["main_steps"],
                        "chains": chains,
                    }
                    for c, chains in zip(clusters, _chain_indexes(texts, design), strict=True)
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
            prepared.append((call, messages, input_hash(messages, self.job.parameters)))
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
            reply.raw = storable(reply.raw)
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
        reply.text = storable(reply.text)
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
                f"{reply.incomplete}; raise max_tokens on the endpoint or retry."
            )
        if reply.incomplete:
            raise parsers.OutputError(f"{reply.incomplete}.")
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


def storable(text: str) -> str:
    """Model text as PostgreSQL can store it (a NUL character cannot be)."""
    return (text or "").replace("\x00", "\ufffd")


def input_hash(messages: list[dict], parameters: dict) -> str:
    shaping = {key: parameters.get(key) for key in ("model", "temperature", "max_tokens", "extra")}
    payload = json.dumps({"messages": messages, "parameters": shaping}, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()


def _errors(messages: Sequence[Message]) -> str:
    return "; ".join(m.text for m in messages if m.is_error) or "; ".join(m.text for m in messages)


def _topic(problem: Problem) -> str:
    if not problem.topic:
        return "not recorded: judge it from the statement"
    return f"{problem.get_topic_display()} ({problem.topic})"


def _chain_indexes(texts: Sequence[str], design: str) -> list[list[int]]:
    """The positions of each rubric's chains in the joined scheme (`Scheme.from_chains` keeps
    their order: rubric 1's chains first)."""
    indexes, start = [], 0
    for text in texts:
        count = len(parse_refgrader(text, design)[0].chains)
        indexes.append(list(range(start, start + count)))
        start += count
    return indexes


def _read_proofbench(text: str) -> dict:
    """A step's reply is cached only when it makes a valid scheme."""
    sections = parsers.scheme_sections(text)
    scheme, messages = parse_proofbench(sections.text)
    if scheme is None:
        raise parsers.OutputError("The scheme could not be read: " + _errors(messages))
    if has_errors(messages):
        raise parsers.OutputError("The scheme is not valid: " + _errors(messages))
    return {"chains": len(scheme.chains), "checkpoints": len(scheme.leaves())}


def _read_rubric(text: str, design: str) -> dict:
    """A rubric step's reply is cached only when it makes a valid rubric."""
    scheme, messages = parse_refgrader(parsers.unfence(text), design)
    if scheme is None:
        raise parsers.OutputError("The rubric could not be read: " + _errors(messages))
    if has_errors(messages):
        raise parsers.OutputError("The rubric is not valid: " + _errors(messages))
    return {"checkpoints": len(scheme.leaves())}
