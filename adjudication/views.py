"""Pages of the adjudication app: the queue, the case page, the experts' discussion of a
returned case, the agreement dashboard with its CSV, and the labels page (gold, manual sending).
Thin: they read through selectors, write through services, and say what went wrong."""

from __future__ import annotations

import csv
import json

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from adjudication import selectors
from adjudication.checkpoints import (
    AMBIGUOUS_ALPHA,
    CSV_COLUMNS,
    MIN_PROOFS,
    ROUGH_BELOW,
    campaign_checkpoint_figures_cached,
    checkpoint_csv_rows,
)
from adjudication.metrics import (
    campaign_agreement_cached,
    disagreement_rows,
    second_opinion_figures,
)
from adjudication.models import AdjudicationCase, CaseStatus
from adjudication.rater_model import rater_model_freshness, rater_model_summary
from adjudication.services import (
    AdjudicationError,
    case_assign,
    case_comment,
    case_open_manual,
    case_resolve,
    case_return,
    imported_ratings_materialise,
    item_gold_set,
)
from annotation.models import Campaign, Item
from annotation.plots import error_series_chart, rater_confusion_svg, reliability_svg
from core.http import FlagError, page_or_fragment, query_flag, wants_fragment
from core.roles import Role, has_role, role_required
from core.values import csv_safe
from core.visibility import blind_among

QUEUE_PAGE = 200


def _require_adjudicator(request: HttpRequest) -> None:
    if not selectors.may_adjudicate(request.user):
        raise PermissionDenied("Only adjudicators and admins work on adjudication cases.")


def queue(request: HttpRequest) -> HttpResponse:
    """The queue, QUEUE_PAGE cases a page; an htmx request gets the table and pager only."""
    _require_adjudicator(request)
    status = request.GET.get("status", "")
    if status not in CaseStatus.values:
        status = ""
    campaign_id = request.GET.get("campaign", "")
    try:
        mine = query_flag(request.GET, "mine")
    except FlagError as exc:
        return HttpResponseBadRequest(exc.message, content_type="text/plain")
    cases = selectors.cases_for_user(
        request.user,
        status=status or None,
        campaign_id=int(campaign_id) if campaign_id.isdigit() else None,
        mine=mine,
    )
    query = request.GET.copy()
    query.pop("page", None)
    context = {
        "page": Paginator(cases, QUEUE_PAGE).get_page(request.GET.get("page")),
        "query": query.urlencode(),
    }
    if not wants_fragment(request):
        context |= {
            "statuses": CaseStatus.choices,
            "status": status,
            "campaigns": Campaign.objects.order_by("name").only("id", "name"),
            "campaign_id": campaign_id,
            "mine": mine,
        }
    return page_or_fragment(
        request,
        page="adjudication/queue.html",
        fragment="adjudication/_case_results.html",
        context=context,
    )


@never_cache  # Back to a case after deciding it shows it decided, not a stale form
def case_detail(request: HttpRequest, pk: int) -> HttpResponse:
    _require_adjudicator(request)
    return _case_page(request, selectors.case_for_adjudicator(request.user, pk))


def _case_page(request: HttpRequest, case, *, posted=None, status: int = 200) -> HttpResponse:
    """The case sheet; `posted`: a refused resolution's form values, shown again (status 400)
    so that the adjudicator's rationale and choices are not lost."""
    context = {"case": case, "posted": posted or {}, **selectors.case_sheet(case)}
    if has_role(request.user, Role.ADMIN) and not case.is_resolved:
        context["adjudicators"] = selectors.eligible_adjudicators(
            campaign_id=case.item.campaign_id, item_id=case.item_id
        )
    if case.is_resolved:
        context["next_case"] = selectors.next_case_for_user(request.user, after=case)
        context["freshness"] = rater_model_freshness(case.item.campaign)
    return render(request, "adjudication/case.html", context, status=status)


def _done(request: HttpRequest, pk: int, action, success: str) -> HttpResponse:
    try:
        action()
    except AdjudicationError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, success)
    return redirect("adjudication:case", pk=pk)


@require_POST
def case_assign_view(request: HttpRequest, pk: int) -> HttpResponse:
    _require_adjudicator(request)
    case = selectors.case_for_adjudicator(request.user, pk)
    target = request.POST.get("adjudicator", "")
    if target == "me":
        adjudicator = request.user
    elif target == "":
        adjudicator = None
    elif has_role(request.user, Role.ADMIN) and target.isdigit():
        adjudicator = get_object_or_404(get_user_model(), pk=int(target))
    else:
        raise PermissionDenied("Only admins assign cases to others.")
    name = adjudicator.get_username() if adjudicator else "nobody"
    return _done(
        request,
        pk,
        lambda: case_assign(case=case, adjudicator=adjudicator, by=request.user),
        f"Case assigned to {name}.",
    )


@require_POST
def case_resolve_view(request: HttpRequest, pk: int) -> HttpResponse:
    _require_adjudicator(request)
    case = selectors.case_for_adjudicator(request.user, pk)
    post = request.POST
    action = post.get("action", "")
    if action == "return":
        return _done(
            request,
            pk,
            lambda: case_return(case=case, user=request.user, question=post.get("question", "")),
            "Case returned to the experts with your question.",
        )
    grade = post.get("grade", "")
    awards = {
        key.removeprefix("award_"): value
        for key, value in post.items()
        if key.startswith("award_") and value != ""
    }
    if post.get("band"):  # a band scheme: one band picked, worth the score recorded
        awards[post["band"]] = post.get("score", "")
    try:
        spans = json.loads(post.get("spans") or "[]")
    except json.JSONDecodeError:
        messages.error(request, "spans: the list of error spans could not be read")
        return redirect("adjudication:case", pk=pk)
    try:
        case_resolve(
            case=case,
            user=request.user,
            action=action,
            grade_id=int(grade) if grade.isdigit() else None,
            score=post.get("score") or None,
            awards=awards,
            spans=spans if isinstance(spans, list) else [],
            rationale=post.get("rationale", ""),
        )
    except AdjudicationError as exc:
        messages.error(request, str(exc))
        case = selectors.case_for_adjudicator(request.user, pk)  # as it now is
        return _case_page(request, case, posted=post, status=400)
    messages.success(request, "Case resolved: the item's label is final.")
    return redirect("adjudication:case", pk=pk)


@require_POST
def case_comment_view(request: HttpRequest, pk: int) -> HttpResponse:
    if request.user.pk in selectors.item_grader_ids(
        get_object_or_404(AdjudicationCase.objects.only("item_id"), pk=pk).item_id
    ):
        case = selectors.case_for_expert(request.user, pk)
        target = "adjudication:discussion"
    else:
        _require_adjudicator(request)
        case = selectors.case_for_adjudicator(request.user, pk)
        target = "adjudication:case"
    try:
        case_comment(case=case, user=request.user, text=request.POST.get("text", ""))
    except AdjudicationError as exc:
        messages.error(request, str(exc))
    return redirect(target, pk=pk)


def discussion(request: HttpRequest, pk: int) -> HttpResponse:
    """A returned case as one of its experts sees it: the question, both judgements, the
    thread. 404 for anyone else, and for the experts before the case is returned."""
    case = selectors.case_for_expert(request.user, pk)
    context = {"case": case, "show_you": True, **selectors.case_sheet(case)}
    return render(request, "adjudication/discussion.html", context)


def returned(request: HttpRequest) -> HttpResponse:
    cases = selectors.returned_cases_for_expert(request.user)
    return render(request, "adjudication/returned.html", {"cases": cases})


@role_required(Role.ADMIN)
def campaigns(request: HttpRequest) -> HttpResponse:
    return render(
        request,
        "adjudication/campaigns.html",
        {"campaigns": Campaign.objects.order_by("-created_at")},
    )


@require_POST
@role_required(Role.ADMIN)
def imported_materialise(request: HttpRequest) -> HttpResponse:
    messages.success(request, imported_ratings_materialise().summary())
    return redirect("adjudication:campaigns")


# The agreement page's long tables (fast grades, weeks) show this many rows until "Show all".
LONG_TABLE_ROWS = 20


@role_required(*selectors.AGREEMENT_READERS)
def dashboard(request: HttpRequest, slug: str) -> HttpResponse:
    campaign = selectors.agreement_campaign_for_user(request.user, slug)
    try:
        only_fit_status = query_flag(request.GET, "fit_status")
    except FlagError as exc:
        return HttpResponseBadRequest(exc.message, content_type="text/plain")
    if only_fit_status:
        return fit_status_fragment(request, campaign)
    figures = campaign_agreement_cached(campaign)
    model = rater_model_summary(campaign)
    if model is not None:
        fit = model["fit"]
        support = [prior * fit.items for prior in fit.priors]
        for rater in model["raters"]:
            rater["plot"] = rater_confusion_svg(
                rater["confusion"],
                fit.classes,
                title=f"{rater['kind']} {rater['name']}",
                support=support,
            )
        rows = (fit.calibration or {}).get("rows")
        if rows:
            model["reliability_plot"] = reliability_svg(
                rows,
                title="Held-out calibration: the share of held-out cases that came, against "
                "the confidence stated for them",
            )
    drift_charts = [
        (
            expert["name"],
            error_series_chart(
                expert["drift"],
                f"{expert['name']}: bias and mean absolute error against the final labels, by week",
            ),
        )
        for expert in figures.experts
        if expert.get("drift")  # an entry cached before drift was computed has none
    ]
    show_all = request.GET.get("show") == "all"
    context = {
        "campaign": campaign,
        "a": figures,
        "show_all": show_all,
        "fast_shown": figures.fast if show_all else figures.fast[:LONG_TABLE_ROWS],
        "weeks_shown": figures.weeks if show_all else figures.weeks[-LONG_TABLE_ROWS:],
        "long_table_rows": LONG_TABLE_ROWS,
        "drift_charts": drift_charts,
        "reveal": second_opinion_figures(campaign),
        "model": model,
        "freshness": model["freshness"] if model else rater_model_freshness(campaign),
    }
    return render(request, "adjudication/dashboard.html", context)


def fit_status_fragment(request: HttpRequest, campaign: Campaign) -> HttpResponse:
    """The rater model's state (the fit's age, a refit queued or running) with the admins' button:
    the fragment the agreement page polls while a refit waits or runs, and the answer to the
    button (estimation.views.rater_model_fit). A poll that finds the refit done asks htmx to
    reload the page, whose figures are then the new fit's."""
    freshness = rater_model_freshness(campaign)
    response = page_or_fragment(
        request,
        page="adjudication/_fit_status.html",
        fragment="adjudication/_fit_status.html",
        context={"campaign": campaign, "freshness": freshness},
    )
    if (
        wants_fragment(request)
        and request.method == "GET"
        and freshness["state"]
        not in (
            "queued",
            "running",
        )
    ):
        response["HX-Refresh"] = "true"
    return response


@role_required(Role.ADMIN)
def disagreements_csv(request: HttpRequest, slug: str) -> HttpResponse:
    campaign = get_object_or_404(Campaign, slug=slug)
    selectors.campaign_blind_check(request.user, campaign, "this campaign's disagreements")
    rows = disagreement_rows(campaign)
    width = max((len(r["judgements"]) for r in rows), default=2)
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{slug}-disagreements.csv"'
    writer = csv.writer(response)
    header = ["item_id", "problem", "proof_id", "generator"]
    for n in range(1, width + 1):
        header += [f"expert_{n}", f"score_{n}", f"seconds_{n}"]
    header += ["difference", "beyond_tolerance", "final_value", "final_source", "case_status"]
    writer.writerow(header)
    for row in rows:
        line = [row["item_id"], row["problem"], row["proof_id"], row["generator"]]
        for n in range(width):
            j = row["judgements"][n] if n < len(row["judgements"]) else None
            line += [j.expert, f"{j.score:g}", j.seconds] if j else ["", "", ""]
        line += [
            f"{row['difference']:g}",
            "yes" if row["beyond_tolerance"] else "no",
            "" if row["final_value"] is None else f"{row['final_value'].normalize():f}",
            row["final_source"],
            row["case_status"],
        ]
        writer.writerow([csv_safe(cell) for cell in line])
    return response


@role_required(*selectors.AGREEMENT_READERS)
def checkpoints(request: HttpRequest, slug: str) -> HttpResponse:
    """Each checkpoint of the schemes the campaign's grades used: agreement on its award and its
    discrimination, with intervals (adjudication.checkpoints)."""
    campaign = selectors.agreement_campaign_for_user(request.user, slug)
    context = {
        "campaign": campaign,
        "schemes": campaign_checkpoint_figures_cached(campaign),
        "columns": CSV_COLUMNS,
        "min_proofs": MIN_PROOFS,
        "ambiguous_alpha": AMBIGUOUS_ALPHA,
        "rough_below": ROUGH_BELOW,
    }
    return render(request, "adjudication/checkpoints.html", context)


@role_required(*selectors.AGREEMENT_READERS)
def checkpoints_csv(request: HttpRequest, slug: str) -> HttpResponse:
    campaign = selectors.agreement_campaign_for_user(request.user, slug)
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{slug}-checkpoints.csv"'
    writer = csv.writer(response)
    writer.writerow([name for name, _ in CSV_COLUMNS])
    for row in checkpoint_csv_rows(campaign_checkpoint_figures_cached(campaign)):
        writer.writerow([csv_safe(cell) if isinstance(cell, str) else cell for cell in row])
    return response


@role_required(Role.ADMIN)
def labels(request: HttpRequest, slug: str) -> HttpResponse:
    campaign = get_object_or_404(Campaign, slug=slug)
    items = (
        Item.objects.filter(campaign=campaign)
        .select_related("proof__problem", "final_label")
        .order_by("id")
    )
    page = Paginator(items, 100).get_page(request.GET.get("page"))
    open_cases = dict(
        AdjudicationCase.objects.filter(item__in=[item.pk for item in page])
        .exclude(status=CaseStatus.RESOLVED)
        .values_list("item_id", "id")
    )
    held = blind_among(request.user, [item.proof_id for item in page])
    rows = [
        {"item": item, "case_id": open_cases.get(item.pk), "hidden": item.proof_id in held}
        for item in page
    ]
    return render(
        request,
        "adjudication/labels.html",
        {
            "campaign": campaign,
            "rows": rows,
            "page": page,
            "freshness": rater_model_freshness(campaign),
        },
    )


@require_POST
@role_required(Role.ADMIN)
def item_send(request: HttpRequest, pk: int) -> HttpResponse:
    item = get_object_or_404(Item.objects.select_related("campaign"), pk=pk)
    try:
        case = case_open_manual(item=item, user=request.user, note=request.POST.get("note", ""))
    except AdjudicationError as exc:
        messages.error(request, str(exc))
        return redirect("adjudication:labels", slug=item.campaign.slug)
    messages.success(request, f"Item {item.pk} sent to adjudication.")
    return redirect("adjudication:case", pk=case.pk)


@require_POST
@role_required(Role.ADMIN)
def item_gold(request: HttpRequest, pk: int) -> HttpResponse:
    item = get_object_or_404(Item.objects.select_related("campaign"), pk=pk)
    gold = request.POST.get("gold") == "1"
    try:
        item_gold_set(item=item, gold=gold, user=request.user)
    except AdjudicationError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"Item {item.pk} {'is now' if gold else 'is no longer'} gold.")
    return redirect("adjudication:labels", slug=item.campaign.slug)
