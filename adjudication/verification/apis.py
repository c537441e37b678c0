"""The verification API, by token: start verifier / meta-verifier runs and labelling loop runs
(admins), read their status, read analyses with their meta-verifications (admins and
researchers). One APIView per operation with input and output serializers."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from adjudication.models import LoopDecision, VerifierRunKind
from adjudication.verification import labelling, verifier_runs
from adjudication.verification import selectors as loop_selectors
from annotation.models import Campaign
from annotation.selectors import proof_selection
from core.api import ListApi, RunStatusOutput
from core.queries import of_ids
from core.roles import Role, api_permission
from core.values import ID_MAX
from jobs.models import JobStatus
from problems.models import Proof
from rubrics.models import LLMEndpoint

Admin = api_permission(Role.ADMIN)
Reader = api_permission(Role.ADMIN, Role.RESEARCHER)


class ProofSelectionInput(serializers.Serializer):
    proof_ids = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=ID_MAX), required=False
    )
    contest = serializers.CharField(required=False, allow_blank=True, default="")
    year = serializers.IntegerField(
        required=False, allow_null=True, default=None, min_value=1, max_value=9999
    )
    generator = serializers.CharField(required=False, allow_blank=True, default="")
    problem = serializers.CharField(required=False, allow_blank=True, default="")

    def proofs(self):
        data = self.validated_data
        if data.get("proof_ids"):
            found = of_ids(Proof.objects.select_related("problem"), "id", data["proof_ids"])
            missing = set(data["proof_ids"]) - {p.pk for p in found}
            if missing:
                raise ValidationError(
                    {"proof_ids": [f"no such proof: {', '.join(map(str, sorted(missing)))}"]}
                )
            return found
        return proof_selection(
            contest=data["contest"], year=data["year"], generator=data["generator"],
            problem=data["problem"],
        )  # fmt: skip


def _endpoint(name: str, field: str) -> LLMEndpoint:
    endpoint = LLMEndpoint.objects.filter(name=name).first()
    if endpoint is None:
        raise ValidationError({field: [f"no LLM endpoint named {name!r}"]})
    return endpoint


class VerifierRunOutput(RunStatusOutput):
    id = serializers.IntegerField()
    kind = serializers.CharField()
    endpoint = serializers.CharField(source="endpoint.name")
    samples = serializers.IntegerField()
    target_ids = serializers.ListField(child=serializers.IntegerField())
    done_count = serializers.IntegerField()
    failed_count = serializers.IntegerField()
    failures = serializers.ListField(child=serializers.CharField())
    error = serializers.CharField()


class VerifierRunStartInput(ProofSelectionInput):
    kind = serializers.ChoiceField(choices=VerifierRunKind.choices)
    endpoint = serializers.CharField(help_text="The LLM endpoint's name.")
    samples = serializers.IntegerField(min_value=1, max_value=64, default=1)
    verifier = serializers.CharField(
        required=False, allow_blank=True, default="",
        help_text="meta_verify: only analyses by this verifier model.",
    )  # fmt: skip


class VerifierRunStartApi(APIView):
    permission_classes = [Admin]

    @extend_schema(
        tags=["verification"], request=VerifierRunStartInput, responses={201: VerifierRunOutput}
    )
    def post(self, request):
        params = VerifierRunStartInput(data=request.data)
        params.is_valid(raise_exception=True)
        data = params.validated_data
        proofs = params.proofs()
        targets = loop_selectors.verifier_run_targets(
            kind=data["kind"], proofs=proofs, verifier=data["verifier"]
        )
        try:
            run = verifier_runs.verifier_run_start(
                kind=data["kind"],
                endpoint=_endpoint(data["endpoint"], "endpoint"),
                targets=targets,
                samples=data["samples"],
                user=request.user,
            )
        except verifier_runs.VerifierRunError as exc:
            raise ValidationError({"detail": str(exc)}) from exc
        return Response(VerifierRunOutput(run).data, status=status.HTTP_201_CREATED)


class VerifierRunDetailApi(APIView):
    permission_classes = [Admin]

    @extend_schema(tags=["verification"], responses=VerifierRunOutput)
    def get(self, request, run_id: int):
        return Response(VerifierRunOutput(loop_selectors.verifier_run_detail(run_id)).data)


class LabellingOutcomeOutput(serializers.Serializer):
    proof_id = serializers.IntegerField()
    status = serializers.ChoiceField(choices=JobStatus.choices, help_text="The job's state.")
    decision = serializers.ChoiceField(
        choices=[("", "not decided"), *LoopDecision.choices],
        help_text="What the loop decided, once the job succeeded: labelled or routed.",
    )
    label = serializers.DecimalField(max_digits=2, decimal_places=1, allow_null=True)
    reason = serializers.CharField()
    item_id = serializers.IntegerField(allow_null=True)
    audit_item_id = serializers.IntegerField(allow_null=True)
    details = serializers.JSONField()
    attempts = serializers.IntegerField()


class LabellingRunOutput(RunStatusOutput):
    id = serializers.IntegerField()
    n = serializers.IntegerField()
    m = serializers.IntegerField()
    k = serializers.IntegerField()
    confirm_at = serializers.DecimalField(max_digits=2, decimal_places=1)
    verifier = serializers.CharField(source="verifier.name")
    meta_verifier = serializers.CharField(source="meta_verifier.name")
    auto_campaign = serializers.CharField(source="auto_campaign.slug")
    route_campaign = serializers.CharField(source="route_campaign.slug", allow_null=True)
    labelled_count = serializers.IntegerField()
    routed_count = serializers.IntegerField()
    failed_count = serializers.IntegerField()


class LabellingRunDetailOutput(LabellingRunOutput):
    outcomes = LabellingOutcomeOutput(many=True)


class LabellingRunStartInput(ProofSelectionInput):
    verifier = serializers.CharField(help_text="The verifier endpoint's name.")
    meta_verifier = serializers.CharField(help_text="The meta-verifier endpoint's name.")
    n = serializers.IntegerField(min_value=1, max_value=64)
    m = serializers.IntegerField(min_value=1, max_value=64)
    k = serializers.IntegerField(min_value=1, max_value=64)
    confirm_at = serializers.ChoiceField(choices=["1", "0.5"], default="1")
    route_campaign = serializers.SlugField(required=False, allow_blank=True, default="")
    auto_campaign = serializers.SlugField(
        required=False,
        allow_blank=True,
        default="",
        help_text="The campaign (0 / 0.5 / 1) for the automatic labels; empty: the one of the "
        "last run with the same configuration, or a new one.",
    )


class LabellingRunStartApi(APIView):
    permission_classes = [Admin]

    @extend_schema(
        tags=["verification"], request=LabellingRunStartInput, responses={201: LabellingRunOutput}
    )
    def post(self, request):
        params = LabellingRunStartInput(data=request.data)
        params.is_valid(raise_exception=True)
        data = params.validated_data
        route = None
        if data["route_campaign"]:
            route = Campaign.objects.filter(slug=data["route_campaign"]).first()
            if route is None:
                raise ValidationError({"route_campaign": ["no such campaign"]})
        auto = None
        if data["auto_campaign"]:
            auto = Campaign.objects.filter(slug=data["auto_campaign"]).first()
            if auto is None:
                raise ValidationError({"auto_campaign": ["no such campaign"]})
        try:
            run = labelling.labelling_run_start(
                proofs=list(params.proofs()),
                verifier=_endpoint(data["verifier"], "verifier"),
                meta_verifier=_endpoint(data["meta_verifier"], "meta_verifier"),
                n=data["n"],
                m=data["m"],
                k=data["k"],
                confirm_at=data["confirm_at"],
                route_campaign=route,
                auto_campaign=auto,
                user=request.user,
            )
        except labelling.LabellingError as exc:
            raise ValidationError({"detail": str(exc)}) from exc
        return Response(LabellingRunOutput(run).data, status=status.HTTP_201_CREATED)


class LabellingRunDetailApi(APIView):
    permission_classes = [Admin]

    @extend_schema(tags=["verification"], responses=LabellingRunDetailOutput)
    def get(self, request, run_id: int):
        run = loop_selectors.labelling_run_detail(run_id)
        data = LabellingRunOutput(run).data
        data["outcomes"] = LabellingOutcomeOutput(
            loop_selectors.labelling_run_outcomes(run), many=True
        ).data
        return Response(data)


class MetaVerificationOutput(serializers.Serializer):
    id = serializers.IntegerField()
    verifier = serializers.CharField()
    sample_key = serializers.CharField()
    text = serializers.CharField()
    score = serializers.DecimalField(max_digits=2, decimal_places=1, allow_null=True)
    kept_contract = serializers.BooleanField()
    score_problem = serializers.CharField()


class AnalysisWithMetaOutput(serializers.Serializer):
    id = serializers.IntegerField()
    proof_id = serializers.IntegerField()
    problem = serializers.CharField(source="proof.problem.external_id")
    verifier = serializers.CharField()
    sample_key = serializers.CharField()
    text = serializers.CharField()
    score = serializers.DecimalField(max_digits=2, decimal_places=1, allow_null=True)
    kept_contract = serializers.BooleanField()
    score_problem = serializers.CharField()
    meta_verifications = MetaVerificationOutput(many=True)


class AnalysisListInput(serializers.Serializer):
    proof = serializers.IntegerField(
        required=False, min_value=1, max_value=ID_MAX, help_text="Only this proof's analyses."
    )
    verifier = serializers.CharField(
        required=False, allow_blank=True, default="", max_length=200,
        help_text="Only this verifier model's.",
    )  # fmt: skip


class AnalysisListApi(ListApi):
    permission_classes = [Reader]

    @extend_schema(
        tags=["verification"],
        parameters=[AnalysisListInput],
        responses=AnalysisWithMetaOutput(many=True),
    )
    def get(self, request):
        params = AnalysisListInput(data=request.query_params)
        params.is_valid(raise_exception=True)
        qs = loop_selectors.analyses_with_meta(
            proof_id=params.validated_data.get("proof"),
            verifier=params.validated_data["verifier"],
            user=request.user,
        )
        return self.page(qs, AnalysisWithMetaOutput)
