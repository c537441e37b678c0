"""RefGrader's matching step, at grading time (seed 004, step 2): a proof is matched to the
closest reference-solution cluster of its problem's scheme, and graded with that cluster's
rubric and representative solution instead of the whole scheme.

A RefGrader scheme keeps its clusters in its provenance (`rubrics.workflows`): each cluster's
main steps, representative solution and the positions of its rubric's chains in the scheme. An
edited version inherits the clusters of the version it was edited from, as long as its chains
still line up with them. A scheme with one cluster (or none recorded) needs no match. A match is
a `GenerationStep` of the proof's problem (step `match:proof <id>`), so k runs of a grader, or a
rerun, ask for it once.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from llm import parsers, prompts
from llm.client import Completion, LLMClient, LLMError, Usage
from problems.models import Proof, ReferenceSolution

from .models import GenerationStep, MarkingScheme
from .structure import Scheme, scheme_to_markdown
from .workflows import input_hash, storable

MATCH_PROMPT = "refgrader_match@v1"
MAX_EDIT_DEPTH = 20
RAW_KEPT = 2000


@dataclass(frozen=True)
class ClusterRubric:
    label: str
    main_steps: list[str]
    solution: str  # the representative reference solution
    rubric: str  # the scheme restricted to this cluster's chains, as Markdown


@dataclass(frozen=True)
class ProofMatch:
    cluster: ClusterRubric
    justification: str


def scheme_clusters(scheme: MarkingScheme) -> list[ClusterRubric]:
    """The clusters a proof graded under `scheme` is matched against; [] when there is nothing
    to choose (one cluster or none recorded, or chains that no longer line up with them)."""
    clusters = _recorded_clusters(scheme)
    if len(clusters) < 2 or not scheme.structure:
        return []
    structure = Scheme.from_dict(scheme.structure)
    chains = [c.get("chains", [index]) for index, c in enumerate(clusters)]
    if sorted(i for group in chains for i in group) != list(range(len(structure.chains))):
        return []
    solutions = list(ReferenceSolution.objects.filter(problem_id=scheme.problem_id).order_by("id"))
    by_id = {s.pk: s.text for s in solutions}
    found = []
    for cluster, indexes in zip(clusters, chains, strict=True):
        text = by_id.get(cluster.get("representative_id"))
        if text is None:
            number = cluster.get("representative", 0)
            if not 1 <= number <= len(solutions):
                return []
            text = solutions[number - 1].text
        only = Scheme(
            chains=[structure.chains[i] for i in indexes],
            shared=structure.shared,
            zero_credit=structure.zero_credit,
            deductions=structure.deductions,
            round_down=structure.round_down,
            notes=structure.notes,
            guidelines=structure.guidelines,
        )
        found.append(
            ClusterRubric(
                label=str(cluster["label"]),
                main_steps=list(cluster.get("main_steps") or []),
                solution=text,
                rubric=scheme_to_markdown(only),
            )
        )
    return found


def _recorded_clusters(scheme: MarkingScheme) -> list[dict]:
    current: MarkingScheme | None = scheme
    for _ in range(MAX_EDIT_DEPTH):
        if current is None:
            break
        clusters = (current.provenance or {}).get("clusters")
        if clusters:
            return clusters
        if not (current.provenance or {}).get("edited_from"):
            break
        current = current.previous
    return []


def match_messages(*, problem: str, clusters: Sequence[ClusterRubric], proof: str) -> list[dict]:
    representatives = json.dumps(
        [
            {
                "class_id": c.label,
                "main_steps": c.main_steps,
                "representative_solution": c.solution,
            }
            for c in clusters
        ],
        ensure_ascii=False,
        indent=1,
    )
    return prompts.render(
        MATCH_PROMPT, problem=problem, representatives=representatives, proof=proof
    )


def proofs_match(
    *, proofs: Sequence[tuple[Proof, MarkingScheme]], client: LLMClient, parameters: dict
) -> tuple[dict[int, ProofMatch], dict[int, str], Usage]:
    """Each proof's closest cluster of its scheme (by proof id), from the step cache or the
    model, the proofs whose match failed, with why (the raw reply included), and the tokens
    of the calls made now (a cached match costs none; a reply that does not parse does).
    Proofs whose scheme has nothing to choose from are in neither."""
    by_scheme: dict[int, list[ClusterRubric]] = {}
    wanted = []
    for proof, scheme in proofs:
        if scheme.pk not in by_scheme:
            by_scheme[scheme.pk] = scheme_clusters(scheme)
        clusters = by_scheme[scheme.pk]
        if clusters:
            messages = match_messages(
                problem=proof.statement_text, clusters=clusters, proof=proof.text
            )
            wanted.append((proof, clusters, messages, input_hash(messages, parameters)))
    matches: dict[int, ProofMatch] = {}
    failures: dict[int, str] = {}
    missing = []
    for proof, clusters, messages, digest in wanted:
        cached = GenerationStep.objects.filter(**_key(proof, parameters, digest)).first()
        if cached is None:
            missing.append((proof, clusters, messages, digest))
        else:
            matches[proof.pk] = _match(clusters, cached.parsed)
    replies = client.complete_many([messages for _, _, messages, _ in missing]) if missing else []
    usage = Usage()
    for (proof, clusters, _, digest), reply in zip(missing, replies, strict=True):
        if not isinstance(reply, LLMError):
            usage = usage + reply.usage
        try:
            parsed = _read(reply, clusters)
        except (LLMError, parsers.OutputError) as exc:
            failures[proof.pk] = str(exc)
            continue
        GenerationStep.objects.update_or_create(
            **_key(proof, parameters, digest),
            defaults={
                "output": storable(reply.text),
                "parsed": parsed,
                "usage": reply.usage.to_dict(),
            },
        )
        matches[proof.pk] = _match(clusters, parsed)
    return matches, failures, usage


def _key(proof: Proof, parameters: dict, digest: str) -> dict:
    return {
        "problem_id": proof.problem_id,
        "step": f"match:proof {proof.pk}",
        "prompt": MATCH_PROMPT,
        "model": parameters.get("model", ""),
        "input_hash": digest,
    }


def _read(reply: Completion | LLMError, clusters: Sequence[ClusterRubric]) -> dict:
    if isinstance(reply, LLMError):
        raise reply
    raw = storable(reply.text)
    try:
        if reply.incomplete:
            raise parsers.OutputError(reply.incomplete)
        found = parsers.closest_cluster(raw, [c.label for c in clusters])
    except parsers.OutputError as exc:
        raise parsers.OutputError(f"{exc} Reply: {raw[:RAW_KEPT]!r}") from exc
    return {"cluster": found.label, "justification": found.justification}


def _match(clusters: Sequence[ClusterRubric], parsed: dict) -> ProofMatch:
    cluster = next(c for c in clusters if c.label == parsed["cluster"])
    return ProofMatch(cluster, parsed.get("justification", ""))
