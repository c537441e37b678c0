"""Reads for scheme generation: the problems to choose from, endpoints and configurations, runs
with their tasks. Generation is an admin's work: views and API check the role."""

from __future__ import annotations

from django.db.models import Count, QuerySet
from django.shortcuts import get_object_or_404

from problems.selectors import ProblemFilters, problem_list
from rubrics.models import GenerationRun, GenerationTask, GeneratorConfig, LLMEndpoint
from rubrics.workflows import endpoint_api_key

PROBLEM_CHOICE_LIMIT = 300


def generation_problem_choices(*, filters: ProblemFilters) -> QuerySet:
    """Problems matching the filters (at most PROBLEM_CHOICE_LIMIT), with their reference
    solution count (generation needs at least one) and how many scheme versions they have."""
    return problem_list(filters=filters).annotate(
        scheme_count=Count("marking_schemes", distinct=True)
    )[:PROBLEM_CHOICE_LIMIT]


def generation_endpoints() -> list[LLMEndpoint]:
    """Every endpoint, each with `key_present` (its key variable is set); the key is never read
    out beyond that."""
    endpoints = list(LLMEndpoint.objects.order_by("name"))
    for endpoint in endpoints:
        endpoint.key_present = bool(endpoint_api_key(endpoint))
    return endpoints


def generator_configs() -> QuerySet[GeneratorConfig]:
    return GeneratorConfig.objects.select_related("endpoint", "frozen_by").annotate(
        run_count=Count("runs")
    )


def generation_runs_recent(*, limit: int = 10) -> QuerySet[GenerationRun]:
    return GenerationRun.objects.select_related("config", "created_by")[:limit]


def generation_run_detail(*, run_id: int) -> GenerationRun:
    return get_object_or_404(
        GenerationRun.objects.select_related("config__endpoint", "created_by"), pk=run_id
    )


def generation_run_tasks(*, run: GenerationRun) -> QuerySet[GenerationTask]:
    return (
        run.tasks.select_related("problem", "scheme")
        .defer("problem__statement", "problem__metadata", "scheme__text", "scheme__structure")
        .order_by("id")
    )
