"""The annotation API, by token: next item, read an item (blindness kept), save a draft,
submit, list one's own grades; admin endpoints to create campaigns and items and to assign.
One APIView per operation with input and output serializers."""

from django.contrib.auth import get_user_model
from drf_spectacular.utils import OpenApiParameter, PolymorphicProxySerializer, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound, PermissionDenied, ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation import selectors, services
from annotation.apis.second_opinion import SecondOpinionDetailOutput, second_opinion_answer
from annotation.models import Item, LabelPolicy, Scale, SecondOpinionSource, TaskKind
from annotation.services.calibration import CalibrationRequired
from config.api import ListApi
from config.limits import ID_MAX, INT_MAX, INT_MIN, LEASE_MINUTES_MAX, REQUIRED_JUDGEMENTS_MAX
from config.roles import ALL_ROLES, Role, api_permission
from config.serializers import SharedFields
from problems.models import Proof

Anyone = api_permission(*ALL_ROLES)
ANALYSIS_ITEM = "This item is an analysis review: use the items/<id>/review/ endpoints."
Admin = api_permission(Role.ADMIN)
TRUE_VALUES = {"1", "true", "yes", "on"}
User = get_user_model()


class GradeSpanInput(SharedFields, serializers.Serializer):
    start = serializers.IntegerField(min_value=0, max_value=INT_MAX)
    end = serializers.IntegerField(min_value=1, max_value=INT_MAX)
    quote = serializers.CharField(allow_blank=True, required=False, default="")
    category = serializers.CharField(max_length=60)
    note = serializers.CharField(allow_blank=True, required=False, default="")


class GradeSubmitInput(SharedFields, serializers.Serializer):
    """The body of a submission and of a draft (a draft is checked like a submission)."""

    score = serializers.DecimalField(
        max_digits=4, decimal_places=2, required=False, allow_null=True
    )
    awards = serializers.DictField(child=serializers.CharField(), required=False)
    deductions = serializers.ListField(child=serializers.CharField(), required=False)
    via_equivalent = serializers.ListField(child=serializers.CharField(), required=False)
    score_note = serializers.CharField(required=False, allow_blank=True)
    comment = serializers.CharField(required=False, allow_blank=True)
    step_verdicts = serializers.DictField(child=serializers.CharField(), required=False)
    first_wrong_step = serializers.IntegerField(
        required=False, allow_null=True, min_value=1, max_value=INT_MAX
    )
    seconds_spent = serializers.IntegerField(required=False, min_value=0, max_value=INT_MAX)
    spans = GradeSpanInput(many=True, required=False)
    submit_key = serializers.CharField(required=False, allow_blank=True, max_length=64)


class GradeSpanOutput(GradeSpanInput):
    """A span as stored, with the fields it was given."""


class GradeOutput(SharedFields, serializers.Serializer):
    id = serializers.IntegerField()
    item = serializers.IntegerField(source="item_id")
    campaign = serializers.CharField(source="item.campaign.slug")
    status = serializers.CharField()
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
    spans = GradeSpanOutput(many=True, source="spans.all")


class ItemOutput(SharedFields, serializers.Serializer):
    id = serializers.IntegerField()
    campaign = serializers.CharField(source="campaign.slug")
    scale = serializers.CharField(source="campaign.scale")
    problem = serializers.CharField(source="proof.problem.external_id")
    statement = serializers.CharField(source="proof.problem.statement")
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


class NoWorkLeftOutput(SharedFields, serializers.Serializer):
    detail = serializers.CharField()
    submitted = serializers.IntegerField()
    drafts = serializers.IntegerField()


NextItemOutput = PolymorphicProxySerializer(
    component_name="NextItemOutput",
    serializers=[ItemDetailOutput, NoWorkLeftOutput],
    resource_type_field_name=None,
)


def _grade_input(data: dict) -> services.GradeInput:
    data = dict(data)
    data.pop("submit_key", None)
    return services.GradeInput.from_data(data)


def _view(request, item_id: int, assignment=None, campaign=None) -> selectors.GradingView:
    from django.http import Http404

    try:
        return selectors.item_view_for_json(
            item_id=item_id, user=request.user, assignment=assignment, campaign=campaign
        )
    except Http404 as exc:
        raise NotFound("No such item.") from exc


def _next_item(request, campaign) -> dict:
    """Leases the expert's next item of the campaign: the item as ItemDetailOutput, or "No work
    left." with the expert's totals."""
    try:
        assignment = services.assignment_next(campaign=campaign, expert=request.user)
    except CalibrationRequired as exc:
        raise PermissionDenied(str(exc)) from exc
    if assignment is None:
        totals = selectors.expert_totals(campaign=campaign, expert=request.user)
        body = {"detail": "No work left.", "submitted": totals.submitted, "drafts": totals.drafts}
        return NoWorkLeftOutput(body).data
    view = _view(request, assignment.item_id, assignment, campaign)
    return ItemDetailOutput(
        {"item": view.item, "grade": view.grade, "other_grades": view.others}
    ).data


class NextItemApi(APIView):
    permission_classes = [Anyone]

    @extend_schema(tags=["annotation"], request=None, responses={200: NextItemOutput})
    def post(self, request, slug):
        campaign = selectors.expert_campaign(slug=slug, user=request.user)
        return Response(_next_item(request, campaign))


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


class DraftSaveApi(APIView):
    permission_classes = [Anyone]

    @extend_schema(tags=["annotation"], request=GradeSubmitInput, responses=GradeOutput)
    def put(self, request, item_id):
        view = _view(request, item_id)
        if view.item.analysis_id is not None:
            raise ValidationError({"problems": [ANALYSIS_ITEM]})
        params = GradeSubmitInput(data=request.data)
        params.is_valid(raise_exception=True)
        try:
            grade = services.grade_save_draft(
                item=view.item, expert=request.user, data=_grade_input(params.validated_data)
            )
        except services.GradeError as exc:
            raise ValidationError({"problems": exc.problems}) from exc
        return Response(GradeOutput(grade).data)


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
        responses=GradeSubmitOutput,
        parameters=[
            OpenApiParameter("revise", bool, description="Change a submitted grade."),
            OpenApiParameter(
                "next", bool, description="Also lease the campaign's next item and return it."
            ),
        ],
        description="Idempotent: a repeat returns the grade already submitted. A submitted "
        "grade is changed with revise=true (kept as a revision). With next=1 the answer also "
        "holds the next item (one round trip per judgement instead of two).",
    )
    def post(self, request, item_id):
        view = _view(request, item_id)
        if view.item.analysis_id is not None:
            raise ValidationError({"problems": [ANALYSIS_ITEM]})
        params = GradeSubmitInput(data=request.data)
        params.is_valid(raise_exception=True)
        data = _grade_input(params.validated_data)
        key = params.validated_data.get("submit_key") or request.headers.get("Idempotency-Key", "")
        want_next = request.query_params.get("next", "").lower() in TRUE_VALUES
        if want_next:  # refused before the grade is written, not after
            selectors.ensure_campaign_expert(
                campaign=view.item.campaign, user=request.user, known=view.campaign_expert
            )
        try:
            if request.query_params.get("revise") and view.grade and view.grade.is_submitted:
                grade = services.grade_revise(grade=view.grade, user=request.user, data=data)
            else:
                grade = services.grade_submit(
                    item=view.item, expert=request.user, data=data, submit_key=key
                )
        except services.GradeError as exc:
            raise ValidationError({"problems": exc.problems}) from exc
        answer = GradeOutput(grade).data
        if view.item.campaign.second_opinion:
            answer |= second_opinion_answer(request=request, view=view, grade=grade)
        if want_next:
            answer["next"] = _next_item(request, view.item.campaign)
        return Response(answer)


class OwnGradeListApi(ListApi):
    permission_classes = [Anyone]

    @extend_schema(tags=["annotation"], responses=GradeOutput(many=True))
    def get(self, request):
        return self.page(selectors.grades_for_expert(expert=request.user), GradeOutput)


class CampaignCreateInput(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    slug = serializers.SlugField(max_length=80, required=False, allow_blank=True)
    task_kind = serializers.ChoiceField(choices=TaskKind.choices, required=False)
    scale = serializers.ChoiceField(choices=Scale.choices, required=False)
    double_share = serializers.DecimalField(
        max_digits=4, decimal_places=3, required=False, min_value=0, max_value=1
    )
    sample_seed = serializers.IntegerField(required=False, min_value=INT_MIN, max_value=INT_MAX)
    tolerance = serializers.DecimalField(
        max_digits=4, decimal_places=2, required=False, min_value=0, max_value=7
    )
    label_policy = serializers.ChoiceField(choices=LabelPolicy.choices, required=False)
    error_taxonomy = serializers.ListField(child=serializers.DictField(), required=False)
    guidelines = serializers.CharField(required=False, allow_blank=True)
    lease_minutes = serializers.IntegerField(
        required=False, min_value=1, max_value=LEASE_MINUTES_MAX
    )
    gold_rate = serializers.DecimalField(
        max_digits=4, decimal_places=3, required=False, min_value=0, max_value=1
    )
    fast_seconds = serializers.IntegerField(required=False, min_value=0, max_value=INT_MAX)
    second_opinion = serializers.ChoiceField(
        choices=SecondOpinionSource.choices, required=False, allow_blank=True
    )
    second_opinion_from = serializers.CharField(required=False, allow_blank=True, max_length=200)
    experts = serializers.ListField(child=serializers.CharField(), required=False)


class CampaignOutput(serializers.Serializer):
    id = serializers.IntegerField()
    slug = serializers.CharField()
    name = serializers.CharField()
    task_kind = serializers.CharField()
    scale = serializers.CharField()
    double_share = serializers.DecimalField(max_digits=4, decimal_places=3)
    sample_seed = serializers.IntegerField()
    tolerance = serializers.DecimalField(max_digits=4, decimal_places=2)
    label_policy = serializers.CharField()
    error_taxonomy = serializers.JSONField()
    status = serializers.CharField()
    lease_minutes = serializers.IntegerField()
    gold_rate = serializers.DecimalField(max_digits=4, decimal_places=3)
    second_opinion = serializers.CharField()
    second_opinion_from = serializers.CharField()


class CampaignCreateApi(APIView):
    permission_classes = [Admin]

    @extend_schema(
        tags=["annotation"], request=CampaignCreateInput, responses={201: CampaignOutput}
    )
    def post(self, request):
        params = CampaignCreateInput(data=request.data)
        params.is_valid(raise_exception=True)
        data = dict(params.validated_data)
        experts = data.pop("experts", [])
        users = list(User.objects.filter(username__in=experts))
        missing = set(experts) - {u.username for u in users}
        if missing:
            raise ValidationError({"experts": [f"no such user: {', '.join(sorted(missing))}"]})
        try:
            campaign = services.campaign_create(created_by=request.user, **data)
        except services.CampaignError as exc:
            raise ValidationError({"detail": str(exc)}) from exc
        for user in users:
            services.campaign_member_add(campaign=campaign, user=user, role="expert")
        return Response(CampaignOutput(campaign).data, status=status.HTTP_201_CREATED)


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
            proofs = Proof.objects.filter(pk__in=data["proof_ids"]).select_related("problem")
        else:
            proofs = selectors.proof_selection(
                contest=data["contest"],
                year=data["year"],
                generator=data["generator"],
                problem=data["problem"],
            )
        try:
            result = services.items_create_from_selection(
                campaign=campaign,
                proofs=proofs,
                required_judgements=data["required_judgements"],
                is_gold=data["is_gold"],
            )
        except services.GradeError as exc:
            raise ValidationError({"problems": exc.problems}) from exc
        body = {
            "created": [item.pk for item in result.created],
            "already_present": result.already_present,
            "double_scored": result.double_scored,
            "without_scheme": sorted(set(result.without_scheme)),
            "summary": result.summary(),
        }
        return Response(ItemsCreateOutput(body).data, status=status.HTTP_201_CREATED)


class AssignInput(serializers.Serializer):
    item = serializers.IntegerField(min_value=1, max_value=ID_MAX)
    expert = serializers.CharField(max_length=150)


class AssignOutput(serializers.Serializer):
    id = serializers.IntegerField()
    item = serializers.IntegerField(source="item_id")
    expert = serializers.CharField(source="expert.username")
    status = serializers.CharField()
    leased_until = serializers.DateTimeField()


class AssignApi(APIView):
    permission_classes = [Admin]

    @extend_schema(tags=["annotation"], request=AssignInput, responses={201: AssignOutput})
    def post(self, request, slug):
        campaign = selectors.campaign_for_user(slug=slug, user=request.user, admin=True)
        params = AssignInput(data=request.data)
        params.is_valid(raise_exception=True)
        item = Item.objects.filter(pk=params.validated_data["item"], campaign=campaign).first()
        expert = User.objects.filter(username=params.validated_data["expert"]).first()
        if item is None or expert is None:
            raise ValidationError({"detail": "No such item in this campaign, or no such user."})
        try:
            assignment = services.assignment_create_manual(
                item=item, expert=expert, assigned_by=request.user
            )
        except services.AssignmentError as exc:
            raise ValidationError({"detail": str(exc)}) from exc
        return Response(AssignOutput(assignment).data, status=status.HTTP_201_CREATED)
