"""Receivers of lower apps' events; each only calls one service, imported when the event comes
(a process that never receives it, such as an export, does not load the services at start-up)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rubrics.models import LLMEndpoint
    from rubrics.services import ImportCounts


def on_corpus_imported(sender, problem_ids: list[int], **kwargs) -> ImportCounts | None:
    """Versions of the schemes the import shipped. An import that shipped none (one EXISTS)
    leaves the service unloaded: its imports (the scheme parsers' patterns) were 0.13 of the
    0.9-1.0 CPU-seconds of `import_corpus` of 2,000 rows."""
    from problems.selectors import problems_with_imported_schemes

    if not problems_with_imported_schemes(problem_ids=problem_ids).exists():
        return None
    from rubrics.services import schemes_import_for_problems

    return schemes_import_for_problems(problem_ids=problem_ids)


def on_migrated(sender, **kwargs) -> LLMEndpoint | None:
    """After every migrate (`make run`, a deployment's release): an endpoint given by
    LLM_BASE_URL and LLM_MODEL is there as the endpoint "settings", without a manual step."""
    from rubrics.generation import llm_endpoint_from_settings, settings_endpoint_available

    return llm_endpoint_from_settings() if settings_endpoint_available() else None
