"""The graders API: start a pairwise grader run over a campaign, and ask its failed calls again
(researchers and admins)."""

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from core.roles import api_permission
from graders.models import PairwisePickRun
from graders.selectors import READERS, pick_campaign_for_user, pick_runs_for_user
from graders.services.evaluation_import import PredictionError
from graders.services.pick_runs import pick_run_create, pick_run_retry
from rubrics.models import LLMEndpoint

Readers = api_permission(*READERS)


class PickRunCreateInput(serializers.Serializer):
    endpoint = serializers.PrimaryKeyRelatedField(queryset=LLMEndpoint.objects.all())
    name = serializers.CharField(max_length=200, required=False, default="")


class PickRunOutput(serializers.ModelSerializer):
    campaign = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    endpoint = serializers.CharField(source="endpoint.name")

    class Meta:
        model = PairwisePickRun
        fields = ["id", "campaign", "name", "source", "endpoint", "status", "processed", "total"]


class PickRunCreateApi(APIView):
    """Queues a pairwise grader run: the endpoint asked which of two proofs of one problem is
    better, in both orders, over the campaign's pairs (a pairwise campaign) or its labelled
    proofs paired per problem. 202 with the run; its picks feed the position probe."""

    permission_classes = [Readers]

    @extend_schema(request=PickRunCreateInput, responses={202: PickRunOutput}, tags=["exports"])
    def post(self, request, slug):
        campaign = pick_campaign_for_user(request.user, slug)
        data = PickRunCreateInput(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            run = pick_run_create(
                user=request.user,
                campaign=campaign,
                endpoint=data.validated_data["endpoint"],
                name=data.validated_data["name"],
            )
        except PredictionError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        return Response(PickRunOutput(run).data, status=status.HTTP_202_ACCEPTED)


class PickRunRetryApi(APIView):
    """Queues a finished pairwise grader run again for its failed calls only (a new round); 400
    while it runs or when no call failed."""

    permission_classes = [Readers]

    @extend_schema(request=None, responses={202: PickRunOutput}, tags=["exports"])
    def post(self, request, run_id):
        run = get_object_or_404(pick_runs_for_user(request.user), pk=run_id)
        try:
            run = pick_run_retry(run=run)
        except PredictionError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        return Response(PickRunOutput(run).data, status=status.HTTP_202_ACCEPTED)
