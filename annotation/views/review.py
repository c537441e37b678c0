"""The analysis review page (meta-verification). Its script (static/js/review.js) saves and
submits through the API's review operations (annotation/apis/review.py); the lease and skip are
the grading page's (an analysis review is a grade)."""

from django.shortcuts import render
from django.urls import reverse

from annotation.review_page import review_page_context, review_view_for_user


def review_page(request, item_id, grading=None):
    """Reached through the grading page's URL (`item_page`), which hands over its view."""
    view = review_view_for_user(item_id=item_id, user=request.user, grading=grading)
    context = review_page_context(view)
    item = view.grading.item
    context["next_url"] = (
        reverse("annotation:next", args=[item.campaign.slug]) + f"?after={item.pk}"
    )
    return render(request, "annotation/review.html", context)
