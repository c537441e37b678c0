"""The API of the AI second opinion (revealed only after the expert commits): read what was
revealed for one's own submitted grade, and the one revision after it, with a reason. The
submission's answer (annotation.apis.grading.GradeSubmitApi) carries the reveal as
`second_opinion`."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation import opinions, selectors, services
from annotation.apis import Anyone
from annotation.models import Grade, SecondOpinion
from core.api import DecimalInput

NOT_ENABLED = "This campaign shows no automatic second opinion."
NOT_SUBMITTED = "Submit your grade first: the automatic opinion is shown only after you commit."


class SecondOpinionAnalysisOutput(serializers.Serializer):
    title = serializers.CharField()
    score = serializers.CharField(allow_blank=True)
    text = serializers.CharField(help_text="Markdown with LaTeX, as the automatic grader wrote it.")


class SecondOpinionDetailOutput(serializers.Serializer):
    grade = serializers.IntegerField(source="grade_id")
    source = serializers.CharField(help_text="verifier or grader.")
    available = serializers.BooleanField(
        help_text="False: no automatic opinion of this proof existed (nothing to revise after)."
    )
    automatic_score = serializers.DecimalField(
        source="score", max_digits=6, decimal_places=3, allow_null=True
    )
    automatic_scale = serializers.CharField(source="scale", allow_blank=True)
    origin = serializers.CharField(allow_blank=True)
    analyses = SecondOpinionAnalysisOutput(many=True)
    revealed_at = serializers.DateTimeField()
    score_before = serializers.DecimalField(
        max_digits=4, decimal_places=2, help_text="The score submitted before the reveal."
    )
    score_after = serializers.DecimalField(
        max_digits=4,
        decimal_places=2,
        allow_null=True,
        help_text="The one revision after the reveal, if any: the grade's score since.",
    )
    reason = serializers.CharField(allow_blank=True)
    revised_at = serializers.DateTimeField(allow_null=True)
    can_revise = serializers.BooleanField()


def second_opinion_payload(row: SecondOpinion, item) -> dict:
    """The reveal as the API and the grading page's submit answer give it."""
    row.can_revise = opinions.second_opinion_can_revise(row=row, item=item)
    return SecondOpinionDetailOutput(row).data


def submit_answer(grade: Grade) -> dict | None:
    """What a submission's answer adds when the campaign reveals a second opinion: the reveal
    (recorded now), or None when the campaign has none."""
    row = services.second_opinion_reveal(grade=grade)
    return None if row is None else second_opinion_payload(row, grade.item)


def second_opinion_answer(*, grade: Grade) -> dict:
    """What GradeSubmitApi's answer adds in a campaign with a second opinion after a submission
    (a repeat of it too; not after an ordinary revision): the reveal."""
    reveal = submit_answer(grade)
    return {} if reveal is None else {"second_opinion": reveal}


def _own_submitted_grade(request, item_id: int):
    from django.http import Http404

    try:
        view = selectors.grading_view_for_user(item_id=item_id, user=request.user)
    except Http404 as exc:
        raise NotFound("No such item.") from exc
    if not services.second_opinion_enabled(view.item):
        raise NotFound(NOT_ENABLED)
    if view.grade is None or not view.grade.is_submitted:
        return view, None
    return view, view.grade


class SecondOpinionDetailApi(APIView):
    permission_classes = [Anyone]

    @extend_schema(
        tags=["annotation"],
        responses={200: SecondOpinionDetailOutput},
        description="The automatic opinion revealed for your submitted grade of the item (the "
        "reveal is recorded on first read). 409 before you submit: nothing automatic is shown "
        "before the expert commits.",
    )
    def get(self, request, item_id):
        view, grade = _own_submitted_grade(request, item_id)
        if grade is None:
            return Response({"detail": NOT_SUBMITTED}, status=status.HTTP_409_CONFLICT)
        row = services.second_opinion_reveal(grade=grade)
        return Response(second_opinion_payload(row, view.item))


class SecondOpinionReviseInput(serializers.Serializer):
    score = DecimalInput(max_digits=4, decimal_places=2)
    reason = serializers.CharField(
        max_length=5000, allow_blank=True, help_text="Why you change your score (required)."
    )


class SecondOpinionReviseOutput(SecondOpinionDetailOutput):
    """The second opinion after the revision."""


class SecondOpinionReviseApi(APIView):
    permission_classes = [Anyone]

    @extend_schema(
        tags=["annotation"],
        request=SecondOpinionReviseInput,
        responses={200: SecondOpinionReviseOutput},
        description="Your one revision after the reveal: the new score and why. Repeating the "
        "same revision returns it; a second, different one is refused (409), as is a revision "
        "once the item is final or the campaign closed (409), of another expert's grade (403 or "
        "404), or without a reason (400).",
    )
    def post(self, request, item_id):
        view, grade = _own_submitted_grade(request, item_id)
        if grade is None:
            return Response({"detail": NOT_SUBMITTED}, status=status.HTTP_409_CONFLICT)
        params = SecondOpinionReviseInput(data=request.data)
        params.is_valid(raise_exception=True)
        try:
            row = services.second_opinion_revise(
                grade=grade,
                expert=request.user,
                score=params.validated_data["score"],
                reason=params.validated_data["reason"],
            )
        except services.SecondOpinionError as exc:
            if exc.field:
                raise ValidationError({exc.field: exc.problems}) from exc
            return Response({"detail": str(exc)}, status=exc.status)
        return Response(second_opinion_payload(row, view.item))
