"""The analysis review API, by token or by the review page's session: save a draft of a
meta-review (versioned like a grade's: a draft based on a version another page replaced is 409
with the stored review), submit it (idempotent; revise=true changes a submitted one, kept as a
revision), and list the meta-reviews the user may read (blindness as on the page)."""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.apis import Anyone
from annotation.apis.grading import (
    ORIGIN_FIELDS,
    GradeConflictOutput,
    OriginFields,
    _written,
    base_version_field,
    conflict_body,
    request_origin,
)
from annotation.apis.items import _view
from annotation.models import MetaReview
from annotation.review_page import meta_reviews_for_user
from annotation.services import GradeConflict, GradeError, Origin
from annotation.services.review import (
    MetaReviewInput,
    meta_review_revise,
    meta_review_save_draft,
    meta_review_snapshot,
    meta_review_submit,
)
from core.api import ListApi
from core.http import query_flag
from core.values import INT_MAX


class MetaReviewDefectInput(serializers.Serializer):
    start = serializers.IntegerField(min_value=0, max_value=INT_MAX)
    end = serializers.IntegerField(min_value=1, max_value=INT_MAX)
    quote = serializers.CharField(allow_blank=True, required=False, default="")
    exists = serializers.BooleanField(allow_null=True, required=False, default=None)
    accurate = serializers.BooleanField(allow_null=True, required=False, default=None)
    note = serializers.CharField(allow_blank=True, required=False, default="")
    proof_start = serializers.IntegerField(
        min_value=0, max_value=INT_MAX, allow_null=True, required=False
    )
    proof_end = serializers.IntegerField(
        min_value=1, max_value=INT_MAX, allow_null=True, required=False
    )
    proof_quote = serializers.CharField(allow_blank=True, required=False, default="")
    from_suggestion = serializers.BooleanField(required=False, default=False)


class MetaReviewSubmitInput(OriginFields, serializers.Serializer):
    defects = MetaReviewDefectInput(many=True, required=False, default=list)
    expression_error = serializers.BooleanField(allow_null=True, required=False, default=None)
    expression_note = serializers.CharField(allow_blank=True, required=False, default="")
    score_fits = serializers.BooleanField(allow_null=True, required=False, default=None)
    score_note = serializers.CharField(allow_blank=True, required=False, default="")
    override = serializers.ChoiceField(
        choices=["0", "0.5", "1"], allow_null=True, required=False, default=None
    )
    override_reason = serializers.CharField(allow_blank=True, required=False, default="")
    comment = serializers.CharField(allow_blank=True, required=False, default="")
    seconds_spent = serializers.IntegerField(
        min_value=0, max_value=INT_MAX, required=False, default=0
    )
    submit_key = serializers.CharField(allow_blank=True, required=False, default="")
    base_version = base_version_field("review")


class MetaReviewDefectOutput(serializers.Serializer):
    start = serializers.IntegerField()
    end = serializers.IntegerField()
    quote = serializers.CharField()
    exists = serializers.BooleanField(allow_null=True)
    accurate = serializers.BooleanField(allow_null=True)
    note = serializers.CharField()
    proof_start = serializers.IntegerField(allow_null=True)
    proof_end = serializers.IntegerField(allow_null=True)
    proof_quote = serializers.CharField()
    from_suggestion = serializers.BooleanField()


class MetaReviewOutput(serializers.Serializer):
    """A meta-review as `meta_review_snapshot` writes it, with its grade's identity (the
    fields document the answer; `to_representation` writes it)."""

    id = serializers.IntegerField()
    item = serializers.IntegerField()
    campaign = serializers.CharField()
    analysis = serializers.IntegerField(allow_null=True)
    expert = serializers.CharField()
    status = serializers.CharField()
    version = serializers.IntegerField(help_text="The review's version, as its grade's.")
    submitted_at = serializers.DateTimeField(allow_null=True)
    score = serializers.CharField(allow_null=True)
    comment = serializers.CharField()
    defects = MetaReviewDefectOutput(many=True)
    expression_error = serializers.BooleanField(allow_null=True)
    expression_note = serializers.CharField()
    score_fits = serializers.BooleanField(allow_null=True)
    score_note = serializers.CharField()
    derived_rating = serializers.CharField(allow_null=True)
    derived_reason = serializers.CharField()
    override = serializers.CharField(allow_null=True)
    override_reason = serializers.CharField()

    def to_representation(self, review):
        grade = review.grade
        return {
            "id": review.pk,
            "item": grade.item_id,
            "campaign": grade.item.campaign.slug,
            "analysis": grade.item.analysis_id,
            "expert": grade.expert.get_username(),
            "status": grade.status,
            "version": grade.version,
            "submitted_at": grade.submitted_at.isoformat() if grade.submitted_at else None,
            **meta_review_snapshot(review),
        }


def _input(request) -> tuple[MetaReviewInput, str, Origin]:
    params = MetaReviewSubmitInput(data=request.data)
    params.is_valid(raise_exception=True)
    data = dict(params.validated_data)
    origin = request_origin(request, data)
    for name in ORIGIN_FIELDS:
        data.pop(name, None)
    key = data.pop("submit_key") or request.headers.get("Idempotency-Key", "")
    try:
        return MetaReviewInput.from_data(data), key, origin
    except GradeError as exc:
        raise ValidationError({"problems": exc.problems}) from exc


class ReviewConflictOutput(GradeConflictOutput):
    review = MetaReviewOutput(
        allow_null=True, help_text="The review as stored (null when only its grade exists)."
    )


def review_conflict_body(exc: GradeConflict) -> dict:
    """A review's 409: the grade as stored, as for a grade, and the review with its defects
    (the page offers to merge them with its own, or to keep one)."""
    review = (
        MetaReview.objects.filter(grade=exc.grade)
        .select_related("grade__item__campaign", "grade__expert")
        .prefetch_related("defects")
        .first()
    )
    return conflict_body(exc) | {"review": MetaReviewOutput(review).data if review else None}


class MetaReviewDraftApi(APIView):
    permission_classes = [Anyone]

    @extend_schema(
        tags=["analysis review"],
        request=MetaReviewSubmitInput,
        responses={200: MetaReviewOutput, 409: ReviewConflictOutput},
        description="Saves work in progress. 409 (with the review as stored) when the review is "
        "submitted, or when another page changed it since base_version.",
    )
    def put(self, request, item_id):
        view = _view(request, item_id)
        data, _, origin = _input(request)
        review, conflict = _written(
            lambda: meta_review_save_draft(
                item=view.item, expert=request.user, data=data, origin=origin
            ),
            review_conflict_body,
        )
        return conflict or Response(MetaReviewOutput(review).data)


class MetaReviewSubmitApi(APIView):
    permission_classes = [Anyone]

    @extend_schema(
        tags=["analysis review"],
        request=MetaReviewSubmitInput,
        responses={200: MetaReviewOutput, 409: ReviewConflictOutput},
        description="Idempotent: a repeat that says what the submitted review says returns it; "
        "a different one is 409 with the review as stored and who submitted it, under the same "
        "submit_key (or Idempotency-Key) too, unless ?revise=true (kept as a revision). With "
        "base_version, a review another page changed since is 409 too.",
    )
    def post(self, request, item_id):
        view = _view(request, item_id)
        data, key, origin = _input(request)
        revise = query_flag(request.query_params, "revise")
        if revise and view.grade and view.grade.is_submitted:
            review, conflict = _written(
                lambda: meta_review_revise(
                    review=view.grade.meta_review, user=request.user, data=data, origin=origin
                ),
                review_conflict_body,
            )
        else:
            review, conflict = _written(
                lambda: meta_review_submit(
                    item=view.item, expert=request.user, data=data, submit_key=key, origin=origin
                ),
                review_conflict_body,
            )
        return conflict or Response(MetaReviewOutput(review).data)


class MetaReviewListApi(ListApi):
    permission_classes = [Anyone]

    @extend_schema(
        tags=["analysis review"],
        parameters=[OpenApiParameter("campaign", str, description="A campaign's slug.")],
        responses=MetaReviewOutput(many=True),
    )
    def get(self, request):
        qs = meta_reviews_for_user(
            user=request.user, campaign=request.query_params.get("campaign", "")
        )
        return self.page(qs, MetaReviewOutput)
