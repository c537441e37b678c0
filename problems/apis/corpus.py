"""Read endpoints of the corpus: problems by external id, proofs by id, for every role, by token.

Each operation is one APIView with an input serializer for its query parameters and an output
serializer for what it returns; lists are paginated (`?page=N`, 50 a page).
"""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api import ListApi
from core.roles import ALL_ROLES, api_permission
from core.visibility import (
    blind_to_evaluations,
    holds_blind_work,
    proof_data_for,
    without_blind_proofs,
)
from problems import selectors
from problems.models import Topic

CorpusReader = api_permission(*ALL_ROLES)


class ReferenceSolutionOutput(serializers.Serializer):
    id = serializers.IntegerField()
    text = serializers.CharField()
    source = serializers.CharField()
    cluster_label = serializers.CharField()
    main_steps = serializers.JSONField()


class ProblemSummaryOutput(serializers.Serializer):
    external_id = serializers.CharField()
    contest = serializers.CharField()
    year = serializers.IntegerField(allow_null=True)
    number = serializers.CharField()
    topic = serializers.CharField()
    source = serializers.CharField()
    proof_count = serializers.IntegerField()
    solution_count = serializers.IntegerField()


class ProblemDetailOutput(serializers.Serializer):
    external_id = serializers.CharField()
    contest = serializers.CharField()
    year = serializers.IntegerField(allow_null=True)
    number = serializers.CharField()
    topic = serializers.CharField()
    statement = serializers.CharField()
    final_answer = serializers.CharField()
    source = serializers.CharField()
    metadata = serializers.JSONField()
    proof_count = serializers.IntegerField()
    reference_solutions = ReferenceSolutionOutput(many=True)


class ProofAnalysisOutput(serializers.Serializer):
    id = serializers.IntegerField()
    verifier = serializers.CharField()
    sample_key = serializers.CharField()
    score = serializers.DecimalField(max_digits=2, decimal_places=1, allow_null=True)
    kept_contract = serializers.BooleanField()
    score_problem = serializers.CharField()
    source = serializers.CharField()
    text = serializers.CharField()


BLIND = (
    "Absent for experts, who grade blind, and for any reader holding the proof ungraded as an "
    "expert (core.visibility)."
)


class ProofOutput(serializers.Serializer):
    """A proof as its reader may see it: `context["user"]` decides (core.visibility)."""

    id = serializers.IntegerField()
    problem = serializers.CharField(source="problem.external_id")
    generator = serializers.CharField(required=False, help_text=BLIND)
    sample_key = serializers.CharField()
    sample_index = serializers.IntegerField(allow_null=True)
    source = serializers.CharField(required=False, help_text=BLIND)
    text = serializers.CharField()
    metadata = serializers.JSONField(required=False, help_text=BLIND)

    def to_representation(self, instance) -> dict:
        return proof_data_for(self.context["user"], super().to_representation(instance))


class ProofDetailOutput(ProofOutput):
    analyses = ProofAnalysisOutput(many=True, required=False, help_text=BLIND)


class ProblemListInput(serializers.Serializer):
    contest = serializers.CharField(required=False, allow_blank=True, max_length=100)
    year = serializers.IntegerField(required=False, min_value=1, max_value=9999)
    topic = serializers.ChoiceField(required=False, choices=[t for t in Topic.values if t])
    search = serializers.CharField(required=False, allow_blank=True, max_length=200)


class ProblemListApi(ListApi):
    permission_classes = [CorpusReader]

    @extend_schema(
        tags=["corpus"],
        operation_id="problems_list",
        parameters=[ProblemListInput],
        responses=ProblemSummaryOutput(many=True),
    )
    def get(self, request):
        params = ProblemListInput(data=request.query_params)
        params.is_valid(raise_exception=True)
        filters = selectors.ProblemFilters(**params.validated_data)
        return self.page(selectors.problem_list(filters=filters), ProblemSummaryOutput)


class ProblemDetailApi(APIView):
    permission_classes = [CorpusReader]

    @extend_schema(tags=["corpus"], operation_id="problems_retrieve", responses=ProblemDetailOutput)
    def get(self, request, external_id: str):
        problem = selectors.problem_for_api(external_id=external_id)
        return Response(ProblemDetailOutput(problem).data)


class ProofListInput(serializers.Serializer):
    problem = serializers.CharField(
        required=False, allow_blank=True, max_length=200, help_text="A problem's external id."
    )
    generator = serializers.CharField(required=False, allow_blank=True, max_length=200)

    def validate_generator(self, value: str) -> str:
        if value and blind_to_evaluations(self.context["user"]):
            raise serializers.ValidationError("Experts grade blind: proofs are not found by model.")
        return value


class ProofListApi(ListApi):
    permission_classes = [CorpusReader]

    @extend_schema(
        tags=["corpus"],
        operation_id="proofs_list",
        parameters=[ProofListInput],
        responses=ProofOutput(many=True),
    )
    def get(self, request):
        params = ProofListInput(data=request.query_params, context={"user": request.user})
        params.is_valid(raise_exception=True)
        proofs = selectors.proof_list(
            problem_external_id=params.validated_data.get("problem", ""),
            generator=params.validated_data.get("generator", ""),
            blind=holds_blind_work(request.user),
        )
        if params.validated_data.get("generator"):
            # a proof held blind is not found by its model (core.visibility)
            proofs = without_blind_proofs(request.user, proofs, proof="pk")
        return self.page(proofs, ProofOutput, context={"user": request.user})


class ProofDetailApi(APIView):
    permission_classes = [CorpusReader]

    @extend_schema(tags=["corpus"], operation_id="proofs_retrieve", responses=ProofDetailOutput)
    def get(self, request, proof_id: int):
        proof = selectors.proof_detail(proof_id=proof_id)
        return Response(ProofDetailOutput(proof, context={"user": request.user}).data)
