"""Evaluation pages: import a grader's predictions, read its report (tables and inline SVG
charts) and download the report as JSON."""

from django.contrib import messages
from django.http import JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods
from django_htmx.http import HttpResponseClientRefresh

from core.http import page_or_fragment, wants_fragment
from core.roles import role_required
from graders import charts, selectors
from graders.forms import EndpointRunForm, GridForm, PredictionsForm
from graders.services.evaluation_import import PredictionError, evaluation_import
from graders.services.evaluations import evaluation_run_create, evaluation_run_retry
from graders.services.grids import grid_create as grid_create_service
from graders.services.grids import grid_retry as grid_retry_service
from jobs.models import JobStatus

READERS = selectors.READERS


def _list_page(request, *, form=None, run_form=None, grid_form=None, status=200):
    campaigns = selectors.campaigns_for_evaluation(request.user)
    return render(
        request,
        "graders/evaluation_list.html",
        {
            "form": form or PredictionsForm(campaigns=campaigns),
            "run_form": run_form or EndpointRunForm(campaigns=campaigns),
            "grid_form": grid_form or GridForm(campaigns=campaigns),
            "evaluations": selectors.evaluations_for_user(request.user)[:50],
            "grids": selectors.grids_for_user(request.user)[:20],
        },
        status=status,
    )


@role_required(*READERS)
@require_http_methods(["POST"])
def evaluation_run_view(request):
    form = EndpointRunForm(request.POST, campaigns=selectors.campaigns_for_evaluation(request.user))
    if form.is_valid():
        try:
            evaluation = evaluation_run_create(
                user=request.user,
                campaign=form.cleaned_data["campaign"],
                endpoint=form.cleaned_data["endpoint"],
                name=form.cleaned_data["name"],
                runs=form.cleaned_data["runs"],
                aggregation=form.cleaned_data["aggregation"],
            )
        except PredictionError as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, "The grader run is queued.")
            return redirect("exports:evaluation", evaluation_id=evaluation.pk)
    return _list_page(request, run_form=form, status=400)


@role_required(*READERS)
@require_http_methods(["GET", "POST"])
def evaluation_list(request):
    form = PredictionsForm(
        request.POST or None,
        request.FILES or None,
        campaigns=selectors.campaigns_for_evaluation(request.user),
    )
    if request.method == "POST" and form.is_valid():
        try:
            evaluation = evaluation_import(
                user=request.user,
                campaign=form.cleaned_data["campaign"],
                name=form.cleaned_data["name"],
                source=form.cleaned_data["source"],
                data=form.cleaned_data["file"].read(),
                aggregation=form.cleaned_data["aggregation"],
            )
        except PredictionError as exc:
            form.add_error("file", str(exc))
        else:
            messages.success(request, f"{evaluation.counts['predictions']} predictions read.")
            return redirect("exports:evaluation", evaluation_id=evaluation.pk)
    return _list_page(request, form=form, status=400 if form.errors else 200)


@role_required(*READERS)
def evaluation_detail(request, evaluation_id: int):
    evaluation = selectors.evaluation_for_user(request.user, evaluation_id)
    report = evaluation.report
    context = {
        "evaluation": evaluation,
        "report": report,
        "failures": selectors.evaluation_failures(evaluation),
    }
    templates = {
        "page": "graders/evaluation_detail.html",
        "fragment": "graders/_evaluation_status.html",
    }
    if wants_fragment(request):
        if evaluation.status == JobStatus.SUCCEEDED:
            return HttpResponseClientRefresh()
        return page_or_fragment(request, **templates, context=context, as_fragment=True)
    if report.get("confusion_matrix"):
        context["heatmap"] = charts.confusion_heatmap(
            report["confusion_matrix"], report["categories"]
        )
        # a report made before A.4's first-n baselines holds only the subset averages
        has_first_n = "best_of_n_subsets" in report
        subsets = not has_first_n or request.GET.get("baselines") == "subsets"
        baselines = "subsets" if subsets else "first_n"
        points = report["best_of_n_subsets"] if subsets and has_first_n else report["best_of_n"]
        context |= {"baselines": baselines, "has_first_n": has_first_n}
        context["bon_chart"] = charts.best_of_n_chart(points, max(report["categories"]), baselines)
    return page_or_fragment(request, **templates, context=context, as_fragment=False)


@role_required(*READERS)
@require_http_methods(["POST"])
def evaluation_retry(request, evaluation_id: int):
    evaluation = selectors.evaluation_for_user(request.user, evaluation_id)
    try:
        evaluation_run_retry(evaluation=evaluation)
    except PredictionError as exc:
        messages.error(request, f"Not retried: {exc}.")
    else:
        messages.success(request, "The failed predictions are queued again.")
    return redirect("exports:evaluation", evaluation_id=evaluation.pk)


@role_required(*READERS)
def evaluation_report_json(request, evaluation_id: int):
    evaluation = selectors.evaluation_for_user(request.user, evaluation_id)
    response = JsonResponse(evaluation.report, json_dumps_params={"indent": 2})
    response["Content-Disposition"] = f'attachment; filename="evaluation-{evaluation.pk}.json"'
    return response


# --- The design space (graders/services/grids.py) -------------------------------------------


@role_required(*READERS)
@require_http_methods(["POST"])
def grid_create(request):
    form = GridForm(request.POST, campaigns=selectors.campaigns_for_evaluation(request.user))
    if form.is_valid():
        data = form.cleaned_data
        try:
            grid = grid_create_service(
                user=request.user,
                campaign=data["campaign"],
                name=data["name"],
                endpoints=list(data["endpoints"]),
                contexts=data["contexts"],
                instructions=data["instructions"],
                runs=data["runs"],
                aggregation=data["aggregation"],
                budget=data["budget"],
            )
        except PredictionError as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, f"The study of {grid.cells.count()} cells is queued.")
            return redirect("exports:grid", grid_id=grid.pk)
    return _list_page(request, grid_form=form, status=400)


@role_required(*READERS)
def grid_detail(request, grid_id: int):
    grid = selectors.grid_for_user(request.user, grid_id)
    context = {"grid": grid, "report": grid.report}
    templates = {"page": "graders/grid_detail.html", "fragment": "graders/_grid_status.html"}
    if wants_fragment(request):
        if grid.status == JobStatus.SUCCEEDED:
            return HttpResponseClientRefresh()
        return page_or_fragment(request, **templates, context=context, as_fragment=True)
    context["failures"] = selectors.grid_failed_calls(grid)
    if grid.report.get("cells"):
        context |= charts.grid_tables(grid.report)
    return page_or_fragment(request, **templates, context=context, as_fragment=False)


@role_required(*READERS)
@require_http_methods(["POST"])
def grid_retry(request, grid_id: int):
    grid = selectors.grid_for_user(request.user, grid_id)
    try:
        grid_retry_service(grid=grid)
    except PredictionError as exc:
        messages.error(request, f"Not retried: {exc}.")
    else:
        messages.success(request, "The failed calls are queued again.")
    return redirect("exports:grid", grid_id=grid.pk)


@role_required(*READERS)
def grid_report_json(request, grid_id: int):
    grid = selectors.grid_for_user(request.user, grid_id)
    response = JsonResponse(grid.report, json_dumps_params={"indent": 2})
    response["Content-Disposition"] = f'attachment; filename="grader-study-{grid.pk}.json"'
    return response
