"""Scheme generation pages (admins): choose problems, method and model, start a run; follow a
run's progress per problem (htmx polling that survives reloads: the state is in the database);
see failures with the raw reply and retry them; freeze a configuration."""

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404, redirect
from django.views.decorators.http import require_POST

from core.http import page_or_fragment, wants_fragment
from core.roles import Role, role_required
from problems.selectors import ProblemFilters, problem_filter_choices
from rubrics import generation
from rubrics.generation import selectors as generation_selectors
from rubrics.generation.forms import GenerationStartForm
from rubrics.models import GenerationTask, GeneratorConfig


def _filters_from(request) -> ProblemFilters:
    params = request.GET
    year = params.get("year", "").strip()
    return ProblemFilters(
        contest=params.get("contest", "").strip(),
        year=int(year) if year.isdigit() else None,
        search=params.get("q", "").strip()[:200],
    )


@role_required(Role.ADMIN)
def generation_page(request):
    filters = _filters_from(request)
    form = GenerationStartForm(request.POST or None, initial={"reuse_steps": True})
    if request.method == "POST" and form.is_valid():
        run = _start(request, form)
        if run is not None:
            return redirect("rubrics:generation-run", run_id=run.pk)
    # ?problems=ID (repeatable) preselects problems, e.g. from a problem's scheme page
    chosen = {str(pk) for pk in (request.POST or request.GET).getlist("problems")}
    context = {
        "filters": filters,
        "problems": generation_selectors.generation_problem_choices(filters=filters),
        "chosen": chosen,
        "limit": generation_selectors.PROBLEM_CHOICE_LIMIT,
    }
    as_fragment = wants_fragment(request) and request.method == "GET"
    if not as_fragment:
        context |= {
            "form": form,
            "choices": problem_filter_choices(),
            "endpoints": generation_selectors.generation_endpoints(),
            "settings_endpoint": generation.settings_endpoint_available(),
            "configs": generation_selectors.generator_configs(),
            "runs": generation_selectors.generation_runs_recent(),
        }
    return page_or_fragment(
        request,
        page="rubrics/generation.html",
        fragment="rubrics/_generation_problems.html",
        context=context,
        as_fragment=as_fragment,
    )


def _start(request, form):
    data = form.cleaned_data
    try:
        config = data["config"] or generation.generator_config_get_or_create(
            method=data["method"],
            prompt_version=data["prompt_version"],
            endpoint=data["endpoint"],
            user=request.user,
        )
        return generation.generation_run_start(
            config=config,
            problems=data["problems"],
            user=request.user,
            reuse_steps=data["reuse_steps"],
        )
    except ValidationError as exc:
        form.add_error(None, exc)
        return None


@role_required(Role.ADMIN)
def generation_run(request, run_id):
    run = generation_selectors.generation_run_detail(run_id=run_id)
    context = {"run": run, "tasks": generation_selectors.generation_run_tasks(run=run)}
    return page_or_fragment(
        request,
        page="rubrics/generation_run.html",
        fragment="rubrics/_generation_progress.html",
        context=context,
    )


@require_POST
@role_required(Role.ADMIN)
def generation_task_retry_view(request, task_id):
    task = get_object_or_404(GenerationTask, pk=task_id)
    try:
        generation.generation_task_retry(task=task)
        messages.success(request, f"Retrying {task.problem.external_id}.")
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    return redirect("rubrics:generation-run", run_id=task.run_id)


@require_POST
@role_required(Role.ADMIN)
def generation_run_retry(request, run_id):
    run = generation_selectors.generation_run_detail(run_id=run_id)
    count = generation.generation_run_retry_failed(run=run)
    messages.success(request, f"Retrying {count} failed problem(s).")
    return redirect("rubrics:generation-run", run_id=run.pk)


@require_POST
@role_required(Role.ADMIN)
def generator_config_freeze_view(request, config_id):
    config = get_object_or_404(GeneratorConfig, pk=config_id)
    try:
        config = generation.generator_config_freeze(config=config, user=request.user)
        messages.success(
            request,
            f"“{config.name}” is frozen: every later run with it uses the same model "
            "and parameters.",
        )
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    return redirect("rubrics:generate")


@require_POST
@role_required(Role.ADMIN)
def llm_endpoint_from_settings_view(request):
    try:
        endpoint = generation.llm_endpoint_from_settings()
        messages.success(request, f"Endpoint “{endpoint.name}” uses {endpoint.model}.")
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    return redirect("rubrics:generate")
