"""The analysis review page (meta-verification) and its JSON endpoints (autosave, submit).
Lease heartbeat and skip are the grading page's endpoints (an analysis review is a grade)."""

from django.http import JsonResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_POST

from annotation.apis.review import MetaReviewSubmitInput
from annotation.review_page import review_page_context, review_view_for_user
from annotation.services import GradeError
from annotation.services.review import (
    MetaReviewInput,
    meta_review_revise,
    meta_review_save_draft,
    meta_review_snapshot,
    meta_review_submit,
)
from annotation.views.jsonio import PayloadError, json_payload, problems_response, validated
from config.roles import ALL_ROLES, role_required


def review_page(request, item_id, grading=None):
    """Reached through the grading page's URL (`item_page`), which hands over its view."""
    view = review_view_for_user(item_id=item_id, user=request.user, grading=grading)
    context = review_page_context(view)
    item = view.grading.item
    context["next_url"] = (
        reverse("annotation:next", args=[item.campaign.slug]) + f"?after={item.pk}"
    )
    return render(request, "annotation/review.html", context)


def _review_input(payload: dict) -> tuple[MetaReviewInput, str]:
    """The page's body checked by the API's serializer: the review and the submission key."""
    data = validated(payload, MetaReviewSubmitInput)
    submit_key = data.pop("submit_key", "")
    return MetaReviewInput.from_data(data), submit_key


def _review_json(review) -> dict:
    body = meta_review_snapshot(review)
    body.update(ok=True, status=review.grade.status, saved_at=review.updated_at.isoformat())
    return body


@require_POST
@role_required(*ALL_ROLES)
def review_draft(request, item_id):
    view = review_view_for_user(item_id=item_id, user=request.user)
    if view.grading.grade is not None and view.grading.grade.is_submitted:
        return JsonResponse({"ok": True, "preview": True})
    try:
        data = _review_input(json_payload(request))[0]
        review = meta_review_save_draft(item=view.grading.item, expert=request.user, data=data)
    except (GradeError, PayloadError) as exc:
        return problems_response(exc)
    return JsonResponse(_review_json(review))


@require_POST
@role_required(*ALL_ROLES)
def review_submit(request, item_id):
    view = review_view_for_user(item_id=item_id, user=request.user)
    try:
        payload = json_payload(request)
        data, submit_key = _review_input(payload)
        revise = payload.get("revise") is True
        if view.review is not None and view.grading.grade.is_submitted and revise:
            review = meta_review_revise(review=view.review, user=request.user, data=data)
        else:
            review = meta_review_submit(
                item=view.grading.item,
                expert=request.user,
                data=data,
                submit_key=submit_key,
            )
    except (GradeError, PayloadError) as exc:
        return problems_response(exc)
    body = _review_json(review)
    item = view.grading.item
    body["next_url"] = reverse("annotation:next", args=[item.campaign.slug]) + f"?after={item.pk}"
    return JsonResponse(body)
