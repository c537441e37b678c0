"""Read endpoints of marking schemes, for every role, by token: the list (latest version per
problem, filtered), one version (text, structure, validation, ratings summary) and the versions
of a problem's scheme. One APIView per operation; lists are paginated (`?page=N`, 50 a page).
Individual raters are not exposed: the API gives the count, the mean and how many are >= 2
(not to experts who are not admins: they rate without seeing the others)."""

from decimal import Decimal

from drf_spectacular.utils import (
    extend_schema,
    extend_schema_field,
)
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api import ListApi
from core.roles import ALL_ROLES, api_permission
from rubrics import selectors
from rubrics.models import SchemeMethod, SchemeStatus
from rubrics.structure import Scheme, format_points

SchemeReader = api_permission(*ALL_ROLES)


def _context(request) -> dict:
    return {"show_means": selectors.scheme_rating_means_visible(user=request.user)}


class RatingsSummaryOutput(serializers.Serializer):
    count = serializers.IntegerField(source="rating_count")
    mean = serializers.SerializerMethodField()
    at_least_2 = serializers.IntegerField(
        source="rating_high", help_text="How many ratings are 2 (reasonable) or more."
    )

    def get_mean(self, scheme) -> float | None:
        if scheme.rating_mean is None:
            return None
        return float(Decimal(scheme.rating_mean).quantize(Decimal("0.01")))


class SchemeSummaryOutput(serializers.Serializer):
    id = serializers.IntegerField()
    problem = serializers.CharField(source="problem.external_id")
    version = serializers.IntegerField()
    method = serializers.CharField()
    status = serializers.CharField()
    is_valid = serializers.BooleanField()
    previous_id = serializers.IntegerField(allow_null=True)
    created_at = serializers.DateTimeField()
    approved_at = serializers.DateTimeField(allow_null=True)
    ratings = serializers.SerializerMethodField(
        help_text="Count, mean and how many are 2 or more; null for experts who are not admins "
        "(they rate without seeing the others)."
    )

    @extend_schema_field(RatingsSummaryOutput(allow_null=True))
    def get_ratings(self, scheme) -> dict | None:
        if not self.context.get("show_means"):
            return None
        return RatingsSummaryOutput(scheme).data


class SchemeListOutput(SchemeSummaryOutput):
    version_count = serializers.IntegerField()
    approved_version = serializers.IntegerField(allow_null=True)


class MessageOutput(serializers.Serializer):
    level = serializers.ChoiceField(choices=["error", "warning"])
    text = serializers.CharField()
    where = serializers.CharField(allow_blank=True)
    line = serializers.IntegerField(allow_null=True)


class SchemeDetailOutput(SchemeSummaryOutput):
    text = serializers.CharField()
    guidelines = serializers.CharField(allow_blank=True)
    structure = serializers.JSONField(help_text="The parsed structure ({} when nothing parsed).")
    chain_totals = serializers.SerializerMethodField(
        help_text="The most each chain can score with the shared prerequisites."
    )
    validation = MessageOutput(many=True)
    provenance = serializers.JSONField()

    def get_chain_totals(self, scheme) -> dict[str, str]:
        if not scheme.structure:
            return {}
        totals = Scheme.from_dict(scheme.structure).chain_totals()
        return {chain_id: format_points(total) for chain_id, total in totals.items()}


class SchemeListInput(serializers.Serializer):
    status = serializers.ChoiceField(required=False, choices=SchemeStatus.values)
    method = serializers.ChoiceField(required=False, choices=SchemeMethod.values)
    valid = serializers.BooleanField(required=False, allow_null=True, default=None)
    contest = serializers.CharField(required=False, allow_blank=True, max_length=100)
    search = serializers.CharField(required=False, allow_blank=True, max_length=200)


class SchemeListApi(ListApi):
    permission_classes = [SchemeReader]

    @extend_schema(
        tags=["schemes"],
        operation_id="schemes_list",
        description="The latest scheme version of each problem; filters apply to it.",
        parameters=[SchemeListInput],
        responses=SchemeListOutput(many=True),
    )
    def get(self, request):
        params = SchemeListInput(data=request.query_params)
        params.is_valid(raise_exception=True)
        filters = selectors.SchemeFilters(**params.validated_data)
        return self.page(
            selectors.scheme_list(filters=filters), SchemeListOutput, context=_context(request)
        )


class SchemeDetailApi(APIView):
    permission_classes = [SchemeReader]

    @extend_schema(tags=["schemes"], operation_id="schemes_retrieve", responses=SchemeDetailOutput)
    def get(self, request, scheme_id: int):
        scheme = selectors.scheme_for_api(scheme_id=scheme_id)
        return Response(SchemeDetailOutput(scheme, context=_context(request)).data)


class ProblemSchemeVersionsApi(ListApi):
    permission_classes = [SchemeReader]

    @extend_schema(
        tags=["schemes"],
        operation_id="problem_scheme_versions_list",
        description="Every version of a problem's scheme, newest first (404 for no problem).",
        responses=SchemeSummaryOutput(many=True),
    )
    def get(self, request, external_id: str):
        versions = selectors.scheme_versions_for_problem(external_id=external_id)
        return self.page(versions, SchemeSummaryOutput, context=_context(request))
