"""The grading page and skip. The page's script (static/js/grading.js, item-page.js) saves,
submits, revises and renews the lease through the API's operations (annotation/apis/grading.py), with
the session and its CSRF token: one door for the page and token clients."""

from django.http import HttpResponseBadRequest
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from annotation import selectors, services
from annotation.page import grading_page_context, page_texts, scale_parts
from annotation.views.campaigns import lease_next
from annotation.views.review import review_page
from annotation.views.second_opinion import second_opinion_flow
from core.http import FlagError, query_flag
from core.roles import ALL_ROLES, role_required
from problems.rendering import texts_rendered


@never_cache  # back to an item after submitting shows the server's state, not a stale page
@role_required(*ALL_ROLES)
def item_page(request, item_id):
    view = selectors.grading_view_for_user(item_id=item_id, user=request.user)
    if view.item.analysis_id is not None:
        return review_page(request, item_id, grading=view)
    texts_rendered(page_texts(view))
    context = grading_page_context(view)
    try:
        context |= _expert_flow(request, view, context["editable"])
    except FlagError as exc:
        return HttpResponseBadRequest(exc.message, content_type="text/plain")
    context["scale_parts"] = scale_parts(view.item.campaign.scale, context["editable"])
    return render(request, "annotation/grade.html", context)


def _expert_flow(request, view: selectors.GradingView, editable: bool) -> dict:
    """Where the expert is in their work: item k of N, the previous item, "Next" that moves on
    from this item; a submitted grade read-only until the expert asks to revise it; the final
    label and the adjudicator's rationale once the item is final."""
    item = view.item
    next_url = reverse("annotation:next", args=[item.campaign.slug]) + f"?after={item.pk}"
    flow: dict = {"next_url": next_url, "final": selectors.final_feedback(item=item)}
    if view.assignment is not None:
        flow["position"] = selectors.expert_position(
            item=item, expert=request.user, grade=view.grade
        )
    if view.grade is not None and view.grade.is_submitted:
        editable = editable and not item.campaign.is_calibration  # gold was shown
        flow["revising"] = query_flag(request.GET, "revise")
        flow["can_revise"] = editable
        flow["editable"] = editable and flow["revising"]
        if item.campaign.second_opinion:
            flow |= second_opinion_flow(view, flow)
    return flow


@require_POST
@role_required(*ALL_ROLES)
def item_skip(request, item_id):
    view = selectors.grading_view_for_user(item_id=item_id, user=request.user)
    if view.assignment is not None:
        try:
            services.assignment_release(assignment=view.assignment)
        except services.AssignmentError as exc:
            return HttpResponseBadRequest(str(exc), content_type="text/plain")
    return lease_next(request, view.item.campaign, after_item_id=view.item.pk)
