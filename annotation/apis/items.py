"""The item API: read an item as the user may see it (blindness kept: the selectors decide), and,
for admins, create a campaign's items from a selection of proofs or analyses. The item and grade
serializers the other operations answer with are here."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation import selectors, services
from annotation.apis import Admin, Anyone
from annotation.models import (
    TaskKind,
)
from annotation.services.review import analysis_items_create
from core.api import SharedFields
from core.queries import of_ids
from core.values import ID_MAX, INT_MAX, REQUIRED_JUDGEMENTS_MAX
from problems.models import Proof, VerifierAnalysis


class GradeSpanInput(SharedFields, serializers.Serializer):
    start = serializers.IntegerField(min_value=0, max_value=INT_MAX)
    end = serializers.IntegerField(min_value=1, max_value=INT_MAX)
    quote = serializers.CharField(allow_blank=True, required=False, default="")
    category = serializers.CharField(max_length=60)
    note = serializers.CharField(allow_blank=True, required=False, default="")


class GradeSpanOutput(GradeSpanInput):
    """A span as stored, with the fields it was given."""


class GradeOutput(SharedFields, serializers.Serializer):
    id = serializers.IntegerField()
    item = serializers.IntegerField(source="item_id")
    campaign = serializers.CharField(source="item.campaign.slug")
    status = serializers.CharField()
    version = serializers.IntegerField(help_text="Incremented on every write of the grade.")
    score = serializers.DecimalField(max_digits=4, decimal_places=2, allow_null=True)
    computed_score = serializers.DecimalField(max_digits=4, decimal_places=2, allow_null=True)
    awards = serializers.JSONField()
    deductions = serializers.JSONField()
    via_equivalent = serializers.JSONField()
    score_note = serializers.CharField()
    comment = serializers.CharField()
    step_verdicts = serializers.JSONField()
    first_wrong_step = serializers.IntegerField(allow_null=True)
    seconds_spent = serializers.IntegerField()
    submitted_at = serializers.DateTimeField(allow_null=True)
    updated_at = serializers.DateTimeField()
    scheme = serializers.IntegerField(source="scheme_id", allow_null=True)
    spans = GradeSpanOutput(many=True, source="span_list")
    submit_key = serializers.CharField(
        help_text="The idempotency key of the submission that was stored (a page that lost an "
        "answer finds its own submission by it)."
    )


class ItemOutput(SharedFields, serializers.Serializer):
    id = serializers.IntegerField()
    campaign = serializers.CharField(source="campaign.slug")
    scale = serializers.CharField(source="campaign.scale")
    problem = serializers.CharField(source="proof.problem.external_id")
    statement = serializers.CharField(
        source="proof.statement_text",
        help_text="The problem's statement the proof is graded against (the one it was rated "
        "against when an import changed the problem's statement since).",
    )
    statement_version = serializers.IntegerField(source="proof.statement_version")
    proof_id = serializers.IntegerField(source="proof.pk")
    proof_text = serializers.CharField(source="proof.text")
    scheme_id = serializers.IntegerField(allow_null=True)
    scheme_version = serializers.IntegerField(source="scheme.version", allow_null=True)
    scheme_structure = serializers.JSONField(source="scheme.structure", allow_null=True)
    is_final = serializers.BooleanField()


class ItemDetailOutput(SharedFields, serializers.Serializer):
    item = ItemOutput()
    grade = GradeOutput(allow_null=True)
    other_grades = GradeOutput(many=True)


def _view(
    request, item_id: int, assignment=None, campaign=None, *, with_open_work: bool = False
) -> selectors.GradingView:
    from django.http import Http404

    try:
        return selectors.item_view_for_json(
            item_id=item_id,
            user=request.user,
            assignment=assignment,
            campaign=campaign,
            with_open_work=with_open_work,
        )
    except Http404 as exc:
        raise NotFound("No such item.") from exc


class ItemDetailApi(APIView):
    permission_classes = [Anyone]

    @extend_schema(tags=["annotation"], responses=ItemDetailOutput)
    def get(self, request, item_id):
        view = _view(request, item_id)
        return Response(
            ItemDetailOutput(
                {"item": view.item, "grade": view.grade, "other_grades": view.others}
            ).data
        )


SELECTION_FILTERS = ("proof_ids", "contest", "year", "generator", "problem")


class ItemsCreateInput(serializers.Serializer):
    contest = serializers.CharField(required=False, allow_blank=True, default="")
    year = serializers.IntegerField(
        required=False, allow_null=True, default=None, min_value=1, max_value=9999
    )
    generator = serializers.CharField(required=False, allow_blank=True, default="")
    problem = serializers.CharField(required=False, allow_blank=True, default="")
    proof_ids = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=ID_MAX), required=False
    )
    required_judgements = serializers.IntegerField(
        required=False,
        allow_null=True,
        default=None,
        min_value=1,
        max_value=REQUIRED_JUDGEMENTS_MAX,
    )
    is_gold = serializers.BooleanField(required=False, default=False)
    all = serializers.BooleanField(
        required=False,
        default=False,
        help_text="true: every proof of the corpus. Otherwise give proof_ids or a filter.",
    )

    def validate(self, data):
        filters = [name for name in SELECTION_FILTERS if data.get(name)]
        if data["all"] and filters:
            raise ValidationError(
                {"all": [f"all=true takes the whole corpus: drop {', '.join(filters)}."]}
            )
        if not data["all"] and not filters:
            raise ValidationError(
                {
                    "all": [
                        "Nothing selected: give proof_ids or a filter (contest, year, generator, problem), or all=true for the whole corpus."
                    ]
                }
            )
        return data


class ItemsCreateOutput(serializers.Serializer):
    created = serializers.ListField(child=serializers.IntegerField())
    already_present = serializers.IntegerField()
    double_scored = serializers.IntegerField()
    without_scheme = serializers.ListField(child=serializers.CharField())
    summary = serializers.CharField()


class ItemsCreateApi(APIView):
    permission_classes = [Admin]

    @extend_schema(
        tags=["annotation"], request=ItemsCreateInput, responses={201: ItemsCreateOutput}
    )
    def post(self, request, slug):
        campaign = selectors.campaign_for_user(slug=slug, user=request.user, admin=True)
        params = ItemsCreateInput(data=request.data)
        params.is_valid(raise_exception=True)
        data = params.validated_data
        if data.get("proof_ids"):
            proofs = of_ids(Proof.objects.all(), "id", data["proof_ids"])
        else:
            proofs = selectors.proof_selection(
                contest=data["contest"],
                year=data["year"],
                generator=data["generator"],
                problem=data["problem"],
            )
        try:
            if campaign.task_kind == TaskKind.ANALYSIS_REVIEW:  # as the page does
                result = analysis_items_create(
                    campaign=campaign,
                    analyses=VerifierAnalysis.objects.filter(proof__in=proofs),
                    required_judgements=data["required_judgements"],
                    is_gold=data["is_gold"],
                )
            else:
                result = services.items_create_from_selection(
                    campaign=campaign,
                    proofs=proofs,
                    required_judgements=data["required_judgements"],
                    is_gold=data["is_gold"],
                )
        except services.GradeError as exc:
            raise ValidationError({"problems": exc.problems}) from exc
        body = {
            "created": result.created_ids,
            "already_present": result.already_present,
            "double_scored": result.double_scored,
            "without_scheme": sorted(set(result.without_scheme)),
            "summary": result.summary(),
        }
        return Response(ItemsCreateOutput(body).data, status=status.HTTP_201_CREATED)
