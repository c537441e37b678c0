"""The annotation API, by token or by the grading page's session (with its CSRF token): next
item, read an item (blindness kept), save a draft, preview a checklist's score, submit, renew
the lease, list one's own grades; admin endpoints to create campaigns and items and to assign.
One APIView per operation with input and output serializers. The grading page calls these same
operations: one door, one set of rules."""

import hashlib
from decimal import Decimal

from django.contrib.auth import get_user_model
from drf_spectacular.utils import OpenApiParameter, PolymorphicProxySerializer, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound, PermissionDenied, ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation import selectors, selectors_campaign, services
from annotation.apis.second_opinion import SecondOpinionDetailOutput, second_opinion_answer
from annotation.calibration_gate import CalibrationRequired
from annotation.models import (
    AssignmentStatus,
    DoubleDesign,
    Item,
    LabelPolicy,
    Scale,
    SecondOpinionSource,
    TaskKind,
)
from annotation.services.review import analysis_items_create
from core.api import DecimalInput, ListApi, SharedFields
from core.http import query_flag
from core.roles import ALL_ROLES, Role, api_permission
from core.values import ID_MAX, INT_MAX, INT_MIN, LEASE_MINUTES_MAX, REQUIRED_JUDGEMENTS_MAX
from problems.models import Proof, VerifierAnalysis
from rubrics.structure import AwardError

Anyone = api_permission(*ALL_ROLES)
ANALYSIS_ITEM = "This item is an analysis review: use the items/<id>/review/ endpoints."
Admin = api_permission(Role.ADMIN)
User = get_user_model()


class GradeSpanInput(SharedFields, serializers.Serializer):
    start = serializers.IntegerField(min_value=0, max_value=INT_MAX)
    end = serializers.IntegerField(min_value=1, max_value=INT_MAX)
    quote = serializers.CharField(allow_blank=True, required=False, default="")
    category = serializers.CharField(max_length=60)
    note = serializers.CharField(allow_blank=True, required=False, default="")


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
    spans = GradeSpanOutput(many=True, source="spans.all")
    submit_key = serializers.CharField(
        help_text="The idempotency key of the submission that was stored (a page that lost an "
        "answer finds its own submission by it)."
    )


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


def _next_item(request, campaign, *, has_open: bool | None) -> dict:
    """Leases the expert's next item of the campaign: the item as ItemDetailOutput, or "No work
    left." with the expert's totals. `has_open`: whether the expert has open work in the
    campaign, when a read already said (None: looked up)."""
    try:
        assignment = services.assignment_next(
            campaign=campaign, expert=request.user, has_open=has_open
        )
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
        return Response(_next_item(request, campaign, has_open=campaign.has_open_work))


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


class LeaseRenewOutput(SharedFields, serializers.Serializer):
    leased_until = serializers.DateTimeField(
        allow_null=True, help_text="None once the item is done."
    )


class LeaseRenewApi(APIView):
    permission_classes = [Anyone]

    @extend_schema(
        tags=["annotation"],
        request=None,
        responses=LeaseRenewOutput,
        description="Keeps the item leased to you while you work on it (the grading page "
        "calls it every few minutes).",
    )
    def post(self, request, item_id):
        assignment = selectors.assignment_for_expert(item_id=item_id, expert=request.user)
        if assignment is None:
            raise NotFound("Not assigned to you.")
        if assignment.status == AssignmentStatus.DONE:
            return Response(LeaseRenewOutput({"leased_until": None}).data)
        try:
            assignment = services.assignment_heartbeat(assignment=assignment)
        except services.AssignmentError as exc:
            raise ValidationError({"problems": [str(exc)]}) from exc
        return Response(LeaseRenewOutput(assignment).data)


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


class CampaignCreateInput(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    slug = serializers.SlugField(max_length=80, required=False, allow_blank=True)
    task_kind = serializers.ChoiceField(choices=TaskKind.choices, required=False)
    scale = serializers.ChoiceField(choices=Scale.choices, required=False)
    double_share = serializers.DecimalField(
        max_digits=4, decimal_places=3, required=False, min_value=0, max_value=1
    )
    sample_seed = serializers.IntegerField(required=False, min_value=INT_MIN, max_value=INT_MAX)
    double_design = serializers.ChoiceField(choices=DoubleDesign.choices, required=False)
    double_uniform_share = serializers.DecimalField(
        max_digits=4, decimal_places=3, required=False, min_value=Decimal("0.001"), max_value=1
    )
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
    double_design = serializers.CharField()
    double_uniform_share = serializers.DecimalField(max_digits=4, decimal_places=3)
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
            proofs = Proof.objects.filter(pk__in=data["proof_ids"]).select_related("problem")
        else:
            proofs = selectors_campaign.proof_selection(
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
