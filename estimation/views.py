"""A campaign's scores with honest intervals (admins and researchers, as the agreement page):
each generator's mean with its design-weighted experts-only and prediction-powered 95%
intervals (or why none can be valid), a plot, and
the same rows as CSV; and the admins' button that queues a refit of the campaign's rater model."""

import csv

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from adjudication.selectors import (
    AGREEMENT_READERS,
    agreement_campaign_for_user,
    campaign_blind_check,
)
from adjudication.views import fit_status_fragment
from annotation.scales import scale_spec
from annotation.selectors import campaign_for_user
from core.http import wants_fragment
from core.roles import Role, role_required
from core.values import csv_safe
from estimation.charts import score_intervals_chart
from estimation.services.intervals import IntervalError, campaign_score_intervals, parse_width
from estimation.services.refit import rater_model_refit_ask

CSV_COLUMNS = [
    "generator",
    "items",
    "expert_labels",
    "automatic_only",
    "paired",
    "human_mean",
    "human_low",
    "human_high",
    "ppi_mean",
    "ppi_low",
    "ppi_high",
    "width",
    "human_labels_needed",
    "ppi_labels_needed",
    "human_assumes",
    "ppi_assumes",
    "human_not_shown_because",
    "ppi_not_shown_because",
]


def _rows(request: HttpRequest, campaign) -> tuple[float, list[dict], str]:
    try:
        width = parse_width(request.GET.get("width"), campaign.scale)
        error = ""
    except IntervalError as exc:
        width, error = parse_width(None, campaign.scale), str(exc)
    rows = [row.as_dict() for row in campaign_score_intervals(campaign=campaign, width=width)]
    return width, rows, error


@role_required(*AGREEMENT_READERS)
def campaign_scores(request: HttpRequest, slug: str) -> HttpResponse:
    campaign = agreement_campaign_for_user(request.user, slug, "this campaign's scores")
    width, rows, error = _rows(request, campaign)
    spec = scale_spec(campaign.scale)
    context = {
        "campaign": campaign,
        "rows": rows,
        "width": width,
        "error": error,
        "plot": score_intervals_chart(rows, float(spec.min), float(spec.max)) if rows else "",
    }
    return render(request, "estimation/scores.html", context, status=400 if error else 200)


@role_required(*AGREEMENT_READERS)
def campaign_scores_csv(request: HttpRequest, slug: str) -> HttpResponse:
    campaign = agreement_campaign_for_user(request.user, slug, "this campaign's scores")
    width, rows, error = _rows(request, campaign)
    if error:
        return HttpResponse(error, status=400, content_type="text/plain; charset=utf-8")
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{slug}-scores.csv"'
    writer = csv.writer(response)
    writer.writerow(CSV_COLUMNS)
    for row in rows:
        human, ppi = row["human"] or {}, row["ppi"] or {}
        writer.writerow(
            [
                csv_safe(row["generator"]),
                row["items"],
                row["expert_labels"],
                row["automatic_only"],
                row["paired"],
                human.get("mean", ""),
                human.get("low", ""),
                human.get("high", ""),
                ppi.get("mean", ""),
                ppi.get("low", ""),
                ppi.get("high", ""),
                round(width, 6),
                "" if row["human_labels_needed"] is None else row["human_labels_needed"],
                "" if row["ppi_labels_needed"] is None else row["ppi_labels_needed"],
                csv_safe(row["human_assumes"]),
                csv_safe(row["ppi_assumes"]),
                csv_safe(row["human_not_shown_because"]),
                csv_safe(row["ppi_not_shown_because"]),
            ]
        )
    return response


@require_POST
@role_required(Role.ADMIN)
def rater_model_fit(request: HttpRequest, slug: str) -> HttpResponse:
    """The agreement page's button: queues the campaign's refit (the debounced job every change
    of a label queues) and never fits here. htmx gets the fit's state, which polls until the
    refit lands; a plain form post goes back to the page with a message."""
    campaign = campaign_for_user(slug=slug, user=request.user, admin=True)
    campaign_blind_check(request.user, campaign, "this campaign's rater model")
    rater_model_refit_ask(campaign_id=campaign.pk)
    if wants_fragment(request):
        return fit_status_fragment(request, campaign)
    messages.success(
        request,
        "Refit queued: it runs in the background within a minute, and every label's confidence "
        "is updated when it lands (the page says the fit's age).",
    )
    return redirect("adjudication:dashboard", slug=campaign.slug)
