"""The grading page and its JSON endpoints (autosave, submit, revise, heartbeat, skip).

The page's script (static/js/grading.js) posts JSON; every endpoint answers JSON with either
the saved state or `problems`, a list of what is wrong, in words."""

from django.http import JsonResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from annotation import selectors, selectors_flow, services
from annotation.apis import GradeSubmitInput
from annotation.models import Assignment, Grade
from annotation.page import grading_page_context
from annotation.views.campaigns import lease_next
from annotation.views.jsonio import PayloadError, json_payload, problems_response, validated
from annotation.views.review import review_page
from annotation.views.second_opinion import second_opinion_flow, second_opinion_submit_json
from config.roles import ALL_ROLES, role_required
from rubrics.structure import AwardError, Scheme, score_breakdown

ANALYSIS_ITEM = "This item is an analysis review: judge it on its review page (review endpoints)."


@never_cache  # back to an item after submitting shows the server's state, not a stale page
@role_required(*ALL_ROLES)
def item_page(request, item_id):
    view = selectors.grading_view_for_user(item_id=item_id, user=request.user)
    if view.item.analysis_id is not None:
        return review_page(request, item_id, grading=view)
    context = grading_page_context(view)
    context |= _expert_flow(request, view, context["editable"])
    return render(request, "annotation/grade.html", context)


def _grade_input(payload: dict) -> tuple[services.GradeInput, str]:
    """The page's body checked by the API's serializer: the grade and the submission key."""
    data = validated(payload, GradeSubmitInput)
    submit_key = data.pop("submit_key", "")
    return services.GradeInput.from_data(data), submit_key


def _expert_flow(request, view: selectors.GradingView, editable: bool) -> dict:
    """Where the expert is in their work: item k of N, the previous item, "Next" that moves on
    from this item; a submitted grade read-only until the expert asks to revise it; the final
    label and the adjudicator's rationale once the item is final."""
    item = view.item
    next_url = reverse("annotation:next", args=[item.campaign.slug]) + f"?after={item.pk}"
    flow: dict = {"next_url": next_url, "final": selectors_flow.final_feedback(item=item)}
    if view.assignment is not None:
        flow["position"] = selectors_flow.expert_position(item=item, expert=request.user)
    if view.grade is not None and view.grade.is_submitted:
        editable = editable and not item.campaign.is_calibration  # gold was shown
        flow["revising"] = request.GET.get("revise") == "1"
        flow["can_revise"] = editable
        flow["editable"] = editable and flow["revising"]
        if item.campaign.second_opinion:
            flow |= second_opinion_flow(view, flow)
    return flow


def _breakdown(grade: Grade) -> dict | None:
    item = grade.item
    if not item.scheme_id or not item.scheme.structure:
        return None
    try:
        return score_breakdown(
            Scheme.from_dict(item.scheme.structure), grade.awards, grade.deductions
        ).to_dict()
    except AwardError:
        return None


def _grade_json(grade: Grade) -> dict:
    """The saved grade for the page; `computed_score` is the checklist's running total (shown
    even before anything is chosen, when the grade stores none)."""
    breakdown = _breakdown(grade)
    return {
        "ok": True,
        "status": grade.status,
        "saved_at": grade.updated_at.isoformat(),
        "computed_score": breakdown["score"] if breakdown else None,
        "breakdown": breakdown,
        "spans": services.spans_snapshot(grade),
    }


@require_POST
@role_required(*ALL_ROLES)
def item_draft(request, item_id):
    view = selectors.item_view_for_json(item_id=item_id, user=request.user)
    if view.item.analysis_id is not None:
        return problems_response(services.GradeError(ANALYSIS_ITEM))
    try:
        data = _grade_input(json_payload(request))[0]
        if view.grade is not None and view.grade.is_submitted:
            return JsonResponse(_preview_json(view.item, data))
        grade = services.grade_save_draft(item=view.item, expert=request.user, data=data)
    except (services.GradeError, PayloadError) as exc:
        return problems_response(exc)
    return JsonResponse(_grade_json(grade))


def _preview_json(item, data: services.GradeInput) -> dict:
    """For a submitted grade being revised: the computed score of the edited checklist, nothing
    saved (a revision is saved only when the expert says so)."""
    body: dict = {"ok": True, "preview": True, "computed_score": None, "breakdown": None}
    if item.scheme_id and item.scheme.structure:
        try:
            breakdown = score_breakdown(
                Scheme.from_dict(item.scheme.structure), data.awards, data.deductions
            )
        except AwardError as exc:
            return {"ok": False, "problems": exc.problems}
        body["breakdown"] = breakdown.to_dict()
        body["computed_score"] = body["breakdown"]["score"]
    return body


@require_POST
@role_required(*ALL_ROLES)
def item_submit(request, item_id):
    view = selectors.item_view_for_json(item_id=item_id, user=request.user)
    if view.item.analysis_id is not None:
        return problems_response(services.GradeError(ANALYSIS_ITEM))
    try:
        payload = json_payload(request)
        data, submit_key = _grade_input(payload)
        if view.grade is not None and view.grade.is_submitted and payload.get("revise") is True:
            grade = services.grade_revise(grade=view.grade, user=request.user, data=data)
        else:
            grade = services.grade_submit(
                item=view.item,
                expert=request.user,
                data=data,
                submit_key=submit_key,
            )
    except (services.GradeError, PayloadError) as exc:
        return problems_response(exc)
    body = _grade_json(grade)
    body["next_url"] = (
        reverse("annotation:next", args=[view.item.campaign.slug]) + f"?after={view.item.pk}"
    )
    if view.item.campaign.second_opinion and payload.get("revise") is not True:
        body |= second_opinion_submit_json(grade)
    return JsonResponse(body)


@require_POST
@role_required(*ALL_ROLES)
def item_heartbeat(request, item_id):
    assignment = Assignment.objects.filter(item_id=item_id, expert=request.user).first()
    if assignment is None:
        return JsonResponse({"ok": False, "problems": ["Not assigned to you."]}, status=404)
    if assignment.status == "done":
        return JsonResponse({"ok": True, "leased_until": None})
    try:
        assignment = services.assignment_heartbeat(assignment=assignment)
    except services.AssignmentError as exc:
        return problems_response(exc)
    return JsonResponse({"ok": True, "leased_until": assignment.leased_until.isoformat()})


@require_POST
@role_required(*ALL_ROLES)
def item_skip(request, item_id):
    view = selectors.grading_view_for_user(item_id=item_id, user=request.user)
    if view.assignment is not None:
        try:
            services.assignment_release(assignment=view.assignment)
        except services.AssignmentError as exc:
            return problems_response(exc)
    return lease_next(request, view.item.campaign, after_item_id=view.item.pk)
