"""Verifier and meta-verifier runs (DeepSeekMath-V2, sections 2.1 and 2.1.2): a verifier endpoint
writes analyses of proofs (problems.VerifierAnalysis), a meta-verifier endpoint writes
meta-analyses of analyses (MetaVerification), each with its 0 / 0.5 / 1 score and whether it
kept the output contract.

A sample counts only when it is complete and well-formed: a reply that stopped at the token limit,
left its `<think>` block open or broke the output contract (`llm.scores.boxed_verdict`: no opening
or final phrase, not exactly one closed box after the final phrase, a value that is not 0, 0.5 or
1) is stored with its raw text, no score and the reason.

Samples are keyed per slot (`<prefix><slot>.<attempt>`): a slot keeps its first scored sample, so
generating is idempotent and a retry asks again only for the slots whose sample failed or has no
score. The automated labelling loop (adjudication.verification.labelling) uses the same two generators.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.utils import timezone

from adjudication.models import JobStatus, MetaVerification, VerifierRun, VerifierRunKind
from annotation.presplit import PresplitError, defect_suggestions_generate
from core.queries import of_ids
from jobs.services import job_send_on_commit
from llm import prompts
from llm.client import Completion, LLMClient, LLMError, LLMTransientError, Usage
from llm.meta_scores import meta_verifier_score
from llm.scores import VerifierScore, verifier_score
from problems.models import Proof, VerifierAnalysis
from rubrics.models import LLMEndpoint
from rubrics.workflows import endpoint_parameters, llm_config

VERIFIER_PROMPT = "verifier@v1"
META_VERIFIER_PROMPT = "meta_verifier@v1"


class VerifierRunError(ValueError):
    """A run that cannot start as asked; the message names the field."""


def endpoint_client(endpoint: LLMEndpoint) -> LLMClient:
    return LLMClient(llm_config(endpoint, endpoint_parameters(endpoint)))


def verifier_messages(proof: Proof) -> list[dict[str, str]]:
    return prompts.render(VERIFIER_PROMPT, problem=proof.statement_text, proof=proof.text)


def meta_verifier_messages(analysis: VerifierAnalysis) -> list[dict[str, str]]:
    return prompts.render(
        META_VERIFIER_PROMPT,
        problem=analysis.proof.statement_text,
        proof=analysis.proof.text,
        analysis=analysis.text,
    )


@dataclass
class Generated:
    """What one batch of calls produced: the rows (in key order, None for a failed call), the
    failures in words, and the tokens spent."""

    rows: list = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    transient: LLMTransientError | None = None


@dataclass(frozen=True)
class Checked:
    """A reply as a sample: its score (None unless the reply is complete and kept the contract),
    whether it kept the contract, and why it has no score."""

    score: Decimal | None
    kept_contract: bool
    problem: str


def checked(reply: Completion, parsed: VerifierScore) -> Checked:
    """The strict reading of a verifier or meta-verifier reply: an incomplete reply (token limit,
    unclosed `<think>`) or a broken contract yields no score."""
    problem = reply.incomplete or ("" if parsed.kept_contract else parsed.problem)
    if problem:
        return Checked(None, False, problem[:200])
    return Checked(parsed.score, True, "")


def _generate(
    *,
    client: LLMClient,
    keys: Sequence[str],
    existing: dict[str, object],
    messages: list[dict[str, str]],
    store: Callable[[str, Completion], object],
) -> Generated:
    missing = [key for key in keys if key not in existing]
    replies = client.complete_many([messages] * len(missing)) if missing else []
    result = Generated()
    made: dict[str, object] = {}
    for key, reply in zip(missing, replies, strict=True):
        if isinstance(reply, LLMError):
            result.failures.append(f"sample {key}: {reply}")
            if isinstance(reply, LLMTransientError):
                result.transient = reply
            continue
        result.usage = result.usage + reply.usage
        made[key] = row = store(key, reply)
        if row.score is None:
            result.failures.append(f"sample {key}: {row.score_problem}")
    result.rows = [existing.get(key) or made.get(key) for key in keys]
    return result


@dataclass
class Slots:
    """Per slot (numbered from 1) its chosen sample (the first scored one) or None, and the keys
    to ask for now (one per slot without a scored sample)."""

    chosen: list
    keys: list[str]


def sample_slots(rows: Sequence, prefix: str, count: int, attempt: int) -> Slots:
    """The slots of `count` samples keyed `<prefix><slot>` or `<prefix><slot>.<attempt>`."""
    by_slot: dict[int, list] = {}
    for row in rows:
        slot = row.sample_key.removeprefix(prefix).split(".", 1)[0]
        if slot.isdigit():
            by_slot.setdefault(int(slot), []).append(row)
    chosen, keys = [], []
    for slot in range(1, count + 1):
        scored = [row for row in by_slot.get(slot, []) if row.score is not None]
        chosen.append(scored[0] if scored else None)
        if not scored:
            keys.append(f"{prefix}{slot}.{attempt}")
    return Slots(chosen, keys)


def slots_fill(slots: Slots, generated_rows: Sequence, prefix: str) -> list:
    """The slots after generation: an empty slot takes its new sample (scored or not)."""
    new = {
        row.sample_key.removeprefix(prefix).split(".", 1)[0]: row for row in generated_rows if row
    }
    return [
        row if row is not None else new.get(str(slot))
        for slot, row in enumerate(slots.chosen, start=1)
    ]


def _metadata(endpoint: LLMEndpoint, prompt: str, reply: Completion, run_id: int | None) -> dict:
    return {
        "endpoint": endpoint.name,
        "model": reply.model,
        "prompt": prompt,
        "usage": reply.usage.to_dict(),
        "finish_reason": reply.finish_reason,
        **({"run": run_id} if run_id else {}),
    }


def analyses_generate(
    *, endpoint: LLMEndpoint, proof: Proof, keys: Sequence[str], run_id: int | None = None
) -> Generated:
    """The verifier's analyses of `proof` under `keys` (sample keys), asking the endpoint only
    for the keys not stored yet."""
    verifier = endpoint.model
    existing = {
        a.sample_key: a
        for a in VerifierAnalysis.objects.filter(
            proof=proof, verifier=verifier, sample_key__in=keys
        )
    }

    def store(key: str, reply: Completion) -> VerifierAnalysis:
        parsed = checked(reply, verifier_score(reply.text))
        try:
            with transaction.atomic():
                return VerifierAnalysis.objects.create(
                    proof=proof,
                    verifier=verifier,
                    sample_key=key,
                    text=reply.text,
                    text_hash=hashlib.sha256(reply.text.encode()).hexdigest(),
                    score=parsed.score,
                    kept_contract=parsed.kept_contract,
                    score_problem=parsed.problem,
                    source=f"verifier endpoint {endpoint.name}",
                    metadata=_metadata(endpoint, VERIFIER_PROMPT, reply, run_id),
                )
        except IntegrityError:
            return VerifierAnalysis.objects.get(proof=proof, verifier=verifier, sample_key=key)

    return _generate(
        client=endpoint_client(endpoint),
        keys=keys,
        existing=existing,
        messages=verifier_messages(proof),
        store=store,
    )


def meta_verifications_generate(
    *,
    endpoint: LLMEndpoint,
    analysis: VerifierAnalysis,
    keys: Sequence[str],
    run_id: int | None = None,
) -> Generated:
    """The meta-verifier's analyses of `analysis` under `keys`, asking only for missing keys."""
    verifier = endpoint.model
    existing = {
        m.sample_key: m
        for m in MetaVerification.objects.filter(
            analysis=analysis, verifier=verifier, sample_key__in=keys
        )
    }

    def store(key: str, reply: Completion) -> MetaVerification:
        parsed = checked(reply, meta_verifier_score(reply.text))
        row, _ = MetaVerification.objects.get_or_create(
            analysis=analysis,
            verifier=verifier,
            sample_key=key,
            defaults={
                "text": reply.text,
                "score": parsed.score,
                "kept_contract": parsed.kept_contract,
                "score_problem": parsed.problem,
                "prompt_tokens": reply.usage.prompt_tokens,
                "completion_tokens": reply.usage.completion_tokens,
                "run_id": run_id if run_id else None,
            },
        )
        return row

    return _generate(
        client=endpoint_client(endpoint),
        keys=keys,
        existing=existing,
        messages=meta_verifier_messages(analysis),
        store=store,
    )


# --- Runs -------------------------------------------------------------------------------------


@transaction.atomic
def verifier_run_start(
    *,
    kind: str,
    endpoint: LLMEndpoint,
    targets: Sequence[Proof] | Sequence[VerifierAnalysis],
    samples: int,
    user: AbstractBaseUser | None,
) -> VerifierRun:
    """Starts a run (a Celery job, enqueued once the run is committed): `samples` analyses of
    each proof (kind verify) or meta-analyses of each analysis (kind meta_verify)."""
    if kind not in VerifierRunKind.values:
        raise VerifierRunError(f"kind: {kind!r} is not one of {', '.join(VerifierRunKind.values)}")
    if samples < 1:
        raise VerifierRunError("samples: ask for at least one sample per target")
    ids = sorted({target.pk for target in targets})
    if not ids:
        raise VerifierRunError("selection: no proofs or analyses selected")
    if kind == VerifierRunKind.DEFECT_SPLIT:
        samples = 1
    run = VerifierRun.objects.create(
        kind=kind,
        endpoint=endpoint,
        samples=samples,
        target_ids=ids,
        total=len(ids) * samples,
        created_by=user,
    )
    job_send_on_commit("verifier_run", [run.pk])
    return run


@transaction.atomic
def verifier_run_retry(*, run: VerifierRun) -> VerifierRun:
    """Runs the job again: samples already stored are kept, failed ones asked for again."""
    run = VerifierRun.objects.select_for_update().get(pk=run.pk)
    run.status = JobStatus.PENDING
    run.finished_at = None
    run.save(update_fields=["status", "finished_at"])
    job_send_on_commit("verifier_run", [run.pk])
    return run


def run_prefix(run: VerifierRun) -> str:
    return f"run{run.pk}-"


def _progress(run_id: int, **changes) -> None:
    VerifierRun.objects.filter(pk=run_id).update(**changes)


def verifier_run_execute(*, run_id: int, final_attempt: bool = True) -> VerifierRun:
    """The job: generates every missing sample of the run, target by target, recording progress,
    tokens and failures on the run row. Idempotent. A transient provider error is raised for the
    job to retry later (unless this is the final attempt); other failures are recorded."""
    run = VerifierRun.objects.select_related("endpoint").get(pk=run_id)
    if run.status == JobStatus.SUCCEEDED:
        return run
    _progress(
        run_id,
        status=JobStatus.RUNNING,
        started_at=run.started_at or timezone.now(),
        error="",
    )
    attempt = run.attempts  # this run's, counted by its claim (jobs.services._take)
    usage = Usage(run.prompt_tokens, run.completion_tokens, 0)
    done = failed = 0
    failures: list[str] = []
    transient: LLMTransientError | None = None
    try:
        for target in _targets(run):
            if run.kind == VerifierRunKind.DEFECT_SPLIT:
                generated = _presplit(run, target)
                label = f"analysis {target.pk}"
                rows = generated.rows
            else:
                generated, rows = _run_samples(run, target, attempt)
                noun = "proof" if run.kind == VerifierRunKind.VERIFY else "analysis"
                label = f"{noun} {target.pk}"
            usage = usage + generated.usage
            usable = sum(1 for row in rows if row is not None and _usable(row))
            done += usable
            failed += len(rows) - usable
            failures.extend(f"{label}, {text}" for text in generated.failures)
            transient = transient or generated.transient
            _progress(
                run_id,
                done_count=done,
                failed_count=failed,
                prompt_tokens=usage.prompt_tokens,
                completion_tokens=usage.completion_tokens,
            )
    except (LLMError, prompts.PromptError) as exc:
        _progress(run_id, status=JobStatus.FAILED, error=str(exc), finished_at=timezone.now())
        return VerifierRun.objects.get(pk=run_id)
    if transient is not None and not final_attempt:
        _progress(run_id, failures=failures, error=f"retrying later: {transient}")
        raise transient
    _progress(
        run_id,
        status=JobStatus.FAILED if failed else JobStatus.SUCCEEDED,
        failures=failures,
        error=f"{failed} sample(s) failed" if failed else "",
        finished_at=timezone.now(),
    )
    return VerifierRun.objects.get(pk=run_id)


def verifier_run_fail(*, run_id: int, reason: str) -> None:
    """Records a failure outside the run's own work (a job that could not be queued, an
    unexpected error) on the run row."""
    _progress(run_id, status=JobStatus.FAILED, error=reason, finished_at=timezone.now())


def _usable(row) -> bool:
    """A stored sample with a result: a scored analysis or meta-analysis, or a pre-split."""
    return getattr(row, "score", True) is not None


def _run_samples(run: VerifierRun, target, attempt: int) -> tuple[Generated, list]:
    """The run's samples of one target, asking only for the slots without a scored sample."""
    prefix = run_prefix(run)
    if run.kind == VerifierRunKind.VERIFY:
        stored = VerifierAnalysis.objects.filter(
            proof=target, verifier=run.endpoint.model, sample_key__startswith=prefix
        )
        slots = sample_slots(list(stored.order_by("id")), prefix, run.samples, attempt)
        generated = analyses_generate(
            endpoint=run.endpoint, proof=target, keys=slots.keys, run_id=run.pk
        )
    else:
        stored = MetaVerification.objects.filter(
            analysis=target, verifier=run.endpoint.model, sample_key__startswith=prefix
        )
        slots = sample_slots(list(stored.order_by("id")), prefix, run.samples, attempt)
        generated = meta_verifications_generate(
            endpoint=run.endpoint, analysis=target, keys=slots.keys, run_id=run.pk
        )
    return generated, slots_fill(slots, generated.rows, prefix)


def _presplit(run: VerifierRun, analysis: VerifierAnalysis) -> Generated:
    """One analysis pre-split into suggested defects (a row per analysis, not per sample)."""
    try:
        result = defect_suggestions_generate(analysis=analysis, endpoint=run.endpoint)
    except LLMTransientError as exc:
        return Generated(rows=[None], failures=[str(exc)], transient=exc)
    except (LLMError, PresplitError) as exc:
        return Generated(rows=[None], failures=[str(exc)])
    failures = [f"{result.unplaced} excerpt(s) not found in the text"] if result.unplaced else []
    return Generated(rows=[result], failures=failures, usage=result.usage)


def _targets(run: VerifierRun):
    if run.kind == VerifierRunKind.VERIFY:
        return (
            of_ids(Proof.objects.all(), "id", run.target_ids)
            .select_related("problem", "statement")
            .order_by("pk")
        )
    return (
        of_ids(VerifierAnalysis.objects.all(), "id", run.target_ids)
        .select_related("proof__problem", "proof__statement")
        .order_by("pk")
    )
