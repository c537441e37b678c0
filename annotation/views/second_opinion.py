"""The AI second opinion on the grading page: revealed only after the expert submits (the page
then reloads read-only and this panel comes in as an htmx fragment), with the one revision it
allows, with a reason: the panel's script sends it to the API's operation
(annotation.apis.second_opinion.SecondOpinionReviseApi), then loads the panel again. One view
serves the panel's page and its fragment."""

from __future__ import annotations

from django.http import Http404
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from annotation import opinions, scales, selectors, services
from annotation.apis.second_opinion import NOT_SUBMITTED
from annotation.page import scale_options
from core.http import page_or_fragment
from core.roles import ALL_ROLES, role_required


def second_opinion_flow(view: selectors.GradingView, flow: dict) -> dict:
    """For the grading page of a submitted grade in a campaign with a second opinion: where the
    panel loads from, and no ordinary revision once the opinion was seen (the panel's one
    revision, with a reason, replaces it)."""
    if not services.second_opinion_enabled(view.item):
        return {}
    extra = {"second_opinion_url": reverse("annotation:second-opinion", args=[view.item.pk])}
    if flow.get("can_revise") and opinions.ordinary_revision_refusal(view.grade, view.item):
        extra |= {
            "can_revise": False,
            "editable": False,
            "revising": False,
            "second_opinion_seen": True,
        }
    return extra


def _context(view, row, error: str = "") -> dict:
    item = view.item
    campaign = item.campaign
    context = {
        "item": item,
        "campaign": campaign,
        "problem": item.proof.problem,
        "grade": view.grade,
        "row": row,
        "error": error,
        "url": reverse("annotation:second-opinion", args=[item.pk]),
        "next_url": reverse("annotation:next", args=[campaign.slug]) + f"?after={item.pk}",
    }
    if row is None:
        return context
    context["can_revise"] = opinions.second_opinion_can_revise(row=row, item=item)
    context["options"] = scale_options(campaign.scale)
    if row.available:
        context["scale_name"] = scales.scale_spec(row.scale).name
        common = scales.comparison_scale(campaign.scale, row.scale)
        if common != campaign.scale:
            context["read_as"] = scales.shown(
                scales.on_scale(row.score_before, campaign.scale, common)
            )
            context["common_name"] = scales.scale_spec(common).name
    return context


@never_cache
@require_GET
@role_required(*ALL_ROLES)
def second_opinion(request, item_id):
    view = selectors.grading_view_for_user(item_id=item_id, user=request.user)
    if not services.second_opinion_enabled(view.item):
        raise Http404("This campaign shows no automatic second opinion.")
    templates = {
        "page": "annotation/second_opinion.html",
        "fragment": "annotation/_second_opinion.html",
    }
    grade = view.grade
    if grade is None or not grade.is_submitted:
        return page_or_fragment(
            request, **templates, context=_context(view, None, NOT_SUBMITTED), status=409
        )
    row = services.second_opinion_reveal(grade=grade)
    return page_or_fragment(request, **templates, context=_context(view, row))
