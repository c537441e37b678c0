"""Pages of calibration: rounds from gold items, the gold feedback on the grading page, the
per-expert report (with its CSV/JSON download) and a campaign's requirement."""

from __future__ import annotations

import csv
import json

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.core.serializers.json import DjangoJSONEncoder
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from annotation import selectors as annotation_selectors
from annotation.models import Campaign
from annotation.plots import error_series_chart
from calibration import selectors, services
from calibration.forms import RequirementForm, RoundForm
from calibration.models import CalibrationRequirement
from core.http import page_or_fragment
from core.roles import ALL_ROLES, Role, has_role, role_required
from core.visibility import blind_count, without_blind_proofs

User = get_user_model()


@role_required(*ALL_ROLES)
def home(request):
    """Admins: the rounds and every expert's figures; everyone else: their own report."""
    if not has_role(request.user, Role.ADMIN):
        return redirect("calibration:report-own")
    rows = selectors.reports()
    context = {
        "rounds": selectors.calibration_rounds(),
        "reports": rows,
        "block_size": selectors.BLOCK_SIZE,
    }
    return render(request, "calibration/home.html", context)


@role_required(Role.ADMIN)
def round_create(request):
    """Pick gold items (adjudicated, agreed or imported labels) and make them a round."""
    campaign_slug = request.GET.get("campaign", "")
    campaign = Campaign.objects.filter(slug=campaign_slug).first() if campaign_slug else None
    everyone = selectors.gold_candidates(campaign=campaign)
    # gold the user grades blind as an expert is left out, and counted (core.visibility)
    candidates = without_blind_proofs(request.user, everyone)
    form = RoundForm(request.POST or None)
    chosen: list[int] = []
    if request.method == "POST":
        chosen = [int(pk) for pk in request.POST.getlist("items") if pk.isdigit()]
        if form.is_valid():
            names = [n.strip() for n in form.cleaned_data["experts"].split(",") if n.strip()]
            experts = list(User.objects.filter(username__in=names))
            unknown = sorted(set(names) - {u.username for u in experts})
            if unknown:
                form.add_error("experts", f"No such user(s): {', '.join(unknown)}")
            else:
                try:
                    round = services.calibration_round_create(
                        name=form.cleaned_data["name"],
                        slug=form.cleaned_data["slug"],
                        guidelines=form.cleaned_data["guidelines"],
                        gold_items=list(candidates.model.objects.filter(pk__in=chosen)),
                        created_by=request.user,
                        experts=experts,
                    )
                except services.CalibrationError as exc:
                    form.add_error(None, str(exc))
                else:
                    messages.success(
                        request,
                        f"Calibration round “{round.name}” created with {len(set(chosen))} gold item(s).",
                    )
                    return redirect("annotation:campaign", slug=round.slug)
    context = {
        "form": form,
        "candidates": candidates[:500],
        "held_out": blind_count(request.user, everyone),
        "chosen": set(chosen),
        "campaigns": Campaign.objects.filter(is_calibration=False).order_by("name"),
        "campaign": campaign,
    }
    return render(request, "calibration/round_form.html", context)


@never_cache
@role_required(*ALL_ROLES)
def feedback(request, item_id):
    """The gold answer after the expert's own submission: a fragment on the grading page (htmx)
    or a page of its own."""
    context = {"feedback": selectors.gold_feedback_for_user(item_id=item_id, user=request.user)}
    return page_or_fragment(
        request,
        page="calibration/feedback.html",
        fragment="calibration/_feedback.html",
        context=context,
    )


def _report_context(report) -> dict:
    blocks = [{"key": s.key, "bias": s.bias, "mae": s.mae} for s in report.by_block]
    weeks = [{"key": s.key, "bias": s.bias, "mae": s.mae} for s in report.by_week]
    return {
        "report": report,
        "block_chart": error_series_chart(
            blocks, f"{report.username}: bias and mean absolute error by block of submissions"
        )
        if blocks
        else None,
        "week_chart": error_series_chart(
            weeks, f"{report.username}: bias and mean absolute error by week"
        )
        if len(weeks) > 1
        else None,
        "block_size": selectors.BLOCK_SIZE,
    }


@role_required(*ALL_ROLES)
def report_own(request):
    return redirect("calibration:report", username=request.user.get_username())


@role_required(*ALL_ROLES)
def report(request, username):
    found = selectors.report_for_user(username=username, user=request.user)
    return render(request, "calibration/report.html", _report_context(found))


REPORT_FIELDS = [
    "expert",
    "submitted_at",
    "item_id",
    "campaign",
    "calibration_round",
    "problem",
    "topic",
    "score",
    "gold",
    "error",
]


def _report_rows(found) -> list[dict]:
    return [
        {
            "expert": e.username,
            "submitted_at": e.submitted_at.isoformat(),
            "item_id": e.item_id,
            "campaign": e.campaign,
            "calibration_round": e.calibration,
            "problem": e.problem,
            "topic": e.topic,
            "score": e.score,
            "gold": e.gold,
            "error": e.error,
        }
        for e in found.errors
    ]


@role_required(*ALL_ROLES)
def report_download(request, username, fmt):
    """The report's rows (one per gold-checked grade) as CSV, or the whole report as JSON."""
    found = selectors.report_for_user(username=username, user=request.user)
    name = f"calibration-{found.username}"
    if fmt == "json":
        body = json.dumps(selectors.report_as_dict(found), cls=DjangoJSONEncoder, indent=1)
        response = HttpResponse(body, content_type="application/json")
    elif fmt == "csv":
        response = HttpResponse(content_type="text/csv; charset=utf-8")
        writer = csv.DictWriter(response, fieldnames=REPORT_FIELDS)
        writer.writeheader()
        writer.writerows(_report_rows(found))
    else:
        raise Http404("Download as csv or json.")
    response["Content-Disposition"] = f'attachment; filename="{name}.{fmt}"'
    return response


@role_required(Role.ADMIN)
def download_all(request):
    """Every expert's gold-checked grades, one CSV (admins)."""
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    writer = csv.DictWriter(response, fieldnames=REPORT_FIELDS)
    writer.writeheader()
    for found in selectors.reports():
        writer.writerows(_report_rows(found))
    response["Content-Disposition"] = 'attachment; filename="calibration-all-experts.csv"'
    return response


@role_required(Role.ADMIN)
def requirement(request, slug):
    """Set, change or remove the campaign's calibration requirement; who passed."""
    campaign = annotation_selectors.campaign_for_user(slug=slug, user=request.user, admin=True)
    if campaign.is_calibration:
        raise Http404("A calibration round has no requirement of its own.")
    current, rows = selectors.requirement_status(campaign)
    initial = {}
    if current is not None:
        initial = {
            "round": current.round,
            "max_mae": current.max_mae,
            "min_items": current.min_items,
        }
    form = RequirementForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        try:
            services.calibration_requirement_set(
                campaign=campaign,
                round=form.cleaned_data["round"],
                max_mae=form.cleaned_data["max_mae"],
                min_items=form.cleaned_data["min_items"],
                set_by=request.user,
            )
        except services.CalibrationError as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, "Calibration requirement saved.")
            response = redirect("calibration:requirement", slug=slug)
            response.status_code = 303
            return response
    context = {"campaign": campaign, "form": form, "current": current, "rows": rows}
    return render(request, "calibration/requirement.html", context)


@never_cache
@role_required(*ALL_ROLES)
def standing(request, slug):
    """Where the expert stands on the campaign's calibration requirement ("Grade next" comes
    here when the gate blocks them): their figures on their round, what is left in it, and what
    to do next; a way forward when nothing is left (an admin gives a new round)."""
    campaign = annotation_selectors.expert_campaign(slug=slug, user=request.user)
    requirement, row = selectors.expert_standing(campaign=campaign, expert=request.user)
    context = {"campaign": campaign, "requirement": requirement, "row": row}
    return render(request, "calibration/standing.html", context)


@require_POST
@role_required(Role.ADMIN)
def retake(request, slug, username):
    """Gives a blocked expert a new round of gold items they never graded (admins)."""
    campaign = get_object_or_404(Campaign, slug=slug)
    requirement = get_object_or_404(CalibrationRequirement, campaign=campaign)
    expert = get_object_or_404(User, username=username, campaign_memberships__campaign=campaign)
    try:
        round = services.calibration_retake_create(
            requirement=requirement, expert=expert, created_by=request.user
        )
    except services.CalibrationError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(
            request,
            f"New round “{round.name}” ({round.items.count()} gold items) given to "
            f"{username}: they are checked on it from now on.",
        )
    response = redirect("calibration:requirement", slug=slug)
    response.status_code = 303
    return response


@require_POST
@role_required(Role.ADMIN)
def requirement_remove(request, slug):
    campaign = get_object_or_404(Campaign, slug=slug)
    services.calibration_requirement_remove(campaign=campaign)
    messages.success(request, "Calibration requirement removed: experts receive items again.")
    return redirect("calibration:requirement", slug=slug)
