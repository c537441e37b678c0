"""LLM pre-split of a verifier analysis into the defects it claims: suggestions an expert may
accept on the review page (never a judgement). The model is asked for exact excerpts; each is
placed in the analysis text (an excerpt found nowhere is dropped and counted), and stored as a
DefectSuggestion with its offsets. Idempotent: an analysis already split by the same source
keeps its suggestions."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from django.db import transaction

from annotation.models import DefectSuggestion
from llm import prompts
from llm.client import LLMClient, Usage
from llm.scores import strip_think
from problems.models import VerifierAnalysis
from rubrics.models import LLMEndpoint
from rubrics.workflows import endpoint_parameters, llm_config

DEFECT_SPLIT_PROMPT = "defect_split@v1"
_LIST = re.compile(r"\[.*\]", re.DOTALL)


class PresplitError(ValueError):
    """The model's reply cannot be read as a list of excerpts."""


@dataclass
class Presplit:
    suggestions: list[DefectSuggestion]
    unplaced: int
    usage: Usage


def excerpts_from_reply(text: str) -> list[str]:
    """The JSON list of strings in the reply (after any `</think>`, inside a code fence or not)."""
    match = _LIST.search(strip_think(text))
    if match is None:
        raise PresplitError("the reply holds no JSON list of excerpts")
    try:
        values = json.loads(match.group(0))
    except ValueError as exc:
        raise PresplitError(f"the list of excerpts is not valid JSON ({exc})") from exc
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise PresplitError("the reply must be a JSON list of strings")
    return [v.strip() for v in values if v.strip()]


def defect_suggestions_generate(*, analysis: VerifierAnalysis, endpoint: LLMEndpoint) -> Presplit:
    source = f"{endpoint.name} ({endpoint.model})"
    existing = list(DefectSuggestion.objects.filter(analysis=analysis, source=source))
    if existing:
        return Presplit(existing, 0, Usage())
    client = LLMClient(llm_config(endpoint, endpoint_parameters(endpoint)))
    reply = client.complete(prompts.render(DEFECT_SPLIT_PROMPT, analysis=analysis.text))
    if reply.incomplete:
        raise PresplitError(reply.incomplete)
    excerpts = excerpts_from_reply(reply.text)
    rows, unplaced, taken = [], 0, []
    for excerpt in excerpts:
        start = analysis.text.find(excerpt)
        if start < 0:
            unplaced += 1
            continue
        end = start + len(excerpt)
        if any(start < e and s < end for s, e in taken):
            continue
        taken.append((start, end))
        rows.append(
            DefectSuggestion(analysis=analysis, start=start, end=end, quote=excerpt, source=source)
        )
    with transaction.atomic():
        DefectSuggestion.objects.bulk_create(rows, ignore_conflicts=True)
    stored = list(DefectSuggestion.objects.filter(analysis=analysis, source=source))
    return Presplit(stored, unplaced, reply.usage)
