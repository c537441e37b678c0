"""Receivers of lower apps' events; each only calls one service, imported when the event comes
(a process that never receives it, such as an export, does not load the services at start-up)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rubrics.models import LLMEndpoint
    from rubrics.services import ImportCounts


def on_corpus_imported(sender, problem_ids: list[int], **kwargs) -> ImportCounts:
    from rubrics.services import schemes_import_for_problems

    return schemes_import_for_problems(problem_ids=problem_ids)


def on_migrated(sender, **kwargs) -> LLMEndpoint | None:
    """After every migrate (`make run`, a deployment's release): an endpoint given by
    LLM_BASE_URL and LLM_MODEL is there as the endpoint "settings", without a manual step."""
    from rubrics.generation import llm_endpoint_from_settings, settings_endpoint_available

    return llm_endpoint_from_settings() if settings_endpoint_available() else None
