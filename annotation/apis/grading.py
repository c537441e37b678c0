"""The grading API: save a draft, preview a checklist's score, submit (with `next=1`, the next item
in the same round trip), list one's own grades. A write's origin and its conflict answer (409
with the stored grade) are here, shared with the review API."""

import hashlib

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation import selectors, services
from annotation.apis import Anyone
from annotation.apis.assignment import _next_item
from annotation.apis.items import GradeOutput, GradeSpanInput, _view
from annotation.apis.second_opinion import SecondOpinionDetailOutput, second_opinion_answer
from core.api import DecimalInput, ListApi, SharedFields
from core.http import query_flag
from core.values import INT_MAX
from rubrics.structure import AwardError

ANALYSIS_ITEM = "This item is an analysis review: use the items/<id>/review/ endpoints."


def base_version_field(noun: str) -> serializers.IntegerField:
    """The version a draft or submission of a grade (or review) was based on."""
    return serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=0,
        max_value=INT_MAX,
        help_text=f"The {noun}'s version this was based on (0: none yet). When given, a {noun} "
        "that another page (tab, device, client) changed since is not overwritten: 409 with "
        f"the {noun} as stored and who changed it.",
    )


class OriginFields(serializers.Serializer):
    """Where a write comes from, as the grading and review pages name it: kept with the stored
    version, so that a conflict names its cause (an earlier submission from this page, another
    tab, another device)."""

    origin_page = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=64,
        help_text="An id of the page load (or client run) sending this write.",
    )
    origin_browser = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=64,
        help_text="An id of the browser (or device) sending it, the same for all its tabs.",
    )


ORIGIN_FIELDS = tuple(OriginFields().fields)


def request_origin(request, params: dict) -> services.Origin:
    """The origin of a write: the ids the page gave, and a digest of the session or token it
    came with (never the key itself)."""
    if request.auth is not None:
        secret = "token:" + str(getattr(request.auth, "key", request.auth))
    else:
        secret = "session:" + (request.session.session_key or "")
    return services.Origin(
        page=params.get("origin_page", ""),
        browser=params.get("origin_browser", ""),
        session=hashlib.sha256(secret.encode()).hexdigest()[:32],
    )


class GradeSubmitInput(SharedFields, OriginFields, serializers.Serializer):
    """The body of a submission and of a draft (a draft is checked like a submission)."""

    score = DecimalInput(
        max_digits=4,
        decimal_places=2,
        required=False,
        allow_null=True,
        help_text="The final score. On a checklist or band item leave it out to take the score "
        "computed from awards and deductions; a different one is an override and needs "
        "score_note.",
    )
    awards = serializers.DictField(child=serializers.CharField(), required=False)
    deductions = serializers.ListField(child=serializers.CharField(), required=False)
    via_equivalent = serializers.ListField(child=serializers.CharField(), required=False)
    score_note = serializers.CharField(
        required=False,
        allow_blank=True,
        trim_whitespace=True,
        help_text="Why the final score overrides the computed one (required for an override).",
    )
    comment = serializers.CharField(required=False, allow_blank=True)
    step_verdicts = serializers.DictField(child=serializers.CharField(), required=False)
    first_wrong_step = serializers.IntegerField(
        required=False, allow_null=True, min_value=1, max_value=INT_MAX
    )
    seconds_spent = serializers.IntegerField(required=False, min_value=0, max_value=INT_MAX)
    spans = GradeSpanInput(many=True, required=False)
    submit_key = serializers.CharField(required=False, allow_blank=True, max_length=64)
    base_version = base_version_field("grade")


def _grade_input(data: dict) -> services.GradeInput:
    data = dict(data)
    for name in ("submit_key", *ORIGIN_FIELDS):
        data.pop(name, None)
    return services.GradeInput.from_data(data)


CAUSES = [
    services.Cause.THIS_PAGE,
    services.Cause.ANOTHER_TAB,
    services.Cause.ANOTHER_DEVICE,
    services.Cause.UNKNOWN,
]


class GradeConflictOutput(SharedFields, serializers.Serializer):
    detail = serializers.CharField()
    cause = serializers.ChoiceField(
        choices=CAUSES,
        help_text="Who wrote the stored version: this_page (an earlier write of this page, or "
        "of this API client when it names no page), another_tab (the same browser or session), "
        "another_device, or unknown (written before origins were kept).",
    )
    grade = GradeOutput(help_text="The grade as stored.")


def conflict_body(exc: services.GradeConflict) -> dict:
    return {
        "detail": "; ".join(exc.problems),
        "cause": exc.cause,
        "grade": GradeOutput(exc.grade).data,
    }


def _written(write, body=conflict_body) -> tuple:
    """Runs a grade write: (grade, None), or (None, the 409 answer, `body` of the conflict) on
    a GradeConflict; other refusals are 400s listing the problems."""
    try:
        return write(), None
    except services.GradeConflict as exc:
        return None, Response(body(exc), status=status.HTTP_409_CONFLICT)
    except services.GradeError as exc:
        raise ValidationError({"problems": exc.problems}) from exc


class DraftSaveApi(APIView):
    permission_classes = [Anyone]

    @extend_schema(
        tags=["annotation"],
        request=GradeSubmitInput,
        responses={200: GradeOutput, 409: GradeConflictOutput},
        description="Saves work in progress. 409 (with the grade as stored) when the grade is "
        "submitted, or has moved past base_version.",
    )
    def put(self, request, item_id):
        view = _view(request, item_id)
        if view.item.analysis_id is not None:
            raise ValidationError({"problems": [ANALYSIS_ITEM]})
        params = GradeSubmitInput(data=request.data)
        params.is_valid(raise_exception=True)
        data = _grade_input(params.validated_data)
        origin = request_origin(request, params.validated_data)
        grade, conflict = _written(
            lambda: services.grade_save_draft(
                item=view.item, expert=request.user, data=data, origin=origin
            )
        )
        return conflict or Response(GradeOutput(grade).data)


class ScorePreviewInput(SharedFields, serializers.Serializer):
    awards = serializers.DictField(child=serializers.CharField(), required=False, default=dict)
    deductions = serializers.ListField(child=serializers.CharField(), required=False, default=list)


class ScorePreviewOutput(SharedFields, serializers.Serializer):
    computed_score = serializers.DecimalField(max_digits=4, decimal_places=2)
    breakdown = serializers.JSONField(help_text="Every step of the computation.")


class ScorePreviewApi(APIView):
    permission_classes = [Anyone]

    @extend_schema(
        tags=["annotation"],
        request=ScorePreviewInput,
        responses=ScorePreviewOutput,
        description="The score the item's checklist gives these awards and deductions; "
        "nothing is saved (the grading page previews a revision with it).",
    )
    def post(self, request, item_id):
        view = _view(request, item_id)
        params = ScorePreviewInput(data=request.data)
        params.is_valid(raise_exception=True)
        try:
            breakdown = selectors.item_score_breakdown(item=view.item, **params.validated_data)
        except AwardError as exc:
            raise ValidationError({"problems": exc.problems}) from exc
        if breakdown is None:
            raise ValidationError({"awards": ["This item has no checklist to compute from."]})
        body = {"computed_score": breakdown.score, "breakdown": breakdown.to_dict()}
        return Response(ScorePreviewOutput(body).data)


class GradeSubmitOutput(GradeOutput):
    second_opinion = SecondOpinionDetailOutput(
        required=False,
        help_text="In a campaign with an AI second opinion, after a first submission: the "
        "automatic score and analyses of the proof, revealed now (see the second-opinion "
        "endpoints to revise once, with a reason).",
    )
    next = serializers.JSONField(
        required=False,
        help_text="With ?next=1: the next item of the campaign, leased to you (as the next/ "
        'endpoint answers it), or {"detail": "No work left.", ...}.',
    )


class GradeSubmitApi(APIView):
    permission_classes = [Anyone]

    @extend_schema(
        tags=["annotation"],
        request=GradeSubmitInput,
        responses={200: GradeSubmitOutput, 409: GradeConflictOutput},
        parameters=[
            OpenApiParameter("revise", bool, description="Change a submitted grade."),
            OpenApiParameter(
                "next", bool, description="Also lease the campaign's next item and return it."
            ),
        ],
        description="Idempotent: a repeat (the same submit_key or Idempotency-Key, or the same "
        "judgement) returns the grade already submitted; a different judgement of a submitted "
        "grade is 409 with the grade as stored, unless revise=true (kept as a revision). With "
        "base_version, a grade that moved on since is 409 too. On a checklist item the score is "
        "computed from the awards unless overridden with a score_note. With next=1 the answer "
        "also holds the next item (one round trip per judgement instead of two).",
    )
    def post(self, request, item_id):
        want_next = query_flag(request.query_params, "next")
        revise = query_flag(request.query_params, "revise")
        # with next=1, the read says whether the expert holds open work on another item: once
        # this one is judged, the next lease needs no statement of its own to know it
        view = _view(request, item_id, with_open_work=want_next)
        if view.item.analysis_id is not None:
            raise ValidationError({"problems": [ANALYSIS_ITEM]})
        params = GradeSubmitInput(data=request.data)
        params.is_valid(raise_exception=True)
        data = _grade_input(params.validated_data)
        origin = request_origin(request, params.validated_data)
        key = params.validated_data.get("submit_key") or request.headers.get("Idempotency-Key", "")
        if want_next:  # refused before the grade is written, not after
            selectors.ensure_campaign_expert(
                campaign=view.item.campaign, user=request.user, known=view.campaign_expert
            )
        revising = revise and view.grade is not None and view.grade.is_submitted
        if revising:
            grade, conflict = _written(
                lambda: services.grade_revise(
                    grade=view.grade, user=request.user, data=data, origin=origin
                )
            )
        else:
            grade, conflict = _written(
                lambda: services.grade_submit(
                    item=view.item, expert=request.user, data=data, submit_key=key, origin=origin
                )
            )
        if conflict:
            return conflict
        answer = GradeOutput(grade).data
        if view.item.campaign.second_opinion and not revising:
            answer |= second_opinion_answer(grade=grade)
        if want_next:
            answer["next"] = _next_item(request, view.item.campaign, has_open=view.open_elsewhere)
        return Response(answer)


class OwnGradeListApi(ListApi):
    permission_classes = [Anyone]

    @extend_schema(tags=["annotation"], responses=GradeOutput(many=True))
    def get(self, request):
        return self.page(selectors.grades_for_expert(expert=request.user), GradeOutput)
