"""The pairwise API: lease the next pair, read a pair (blind: the problem and the two texts in
the order drawn for the judgement), submit a judgement (left / right / tie in the screen's
order, stored against the pair's proof keys), make pairs (admins), settle a case
(adjudicators) and read the Bradley-Terry scores (researchers, adjudicators, admins)."""

from django.contrib.auth import get_user_model
from drf_spectacular.utils import PolymorphicProxySerializer, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation import selectors
from annotation.apis import Admin, Anyone
from annotation.models import PairChoice
from annotation.selectors import pairs as pair_selectors
from annotation.services import pairs as pair_services
from core.roles import Role, api_permission
from core.values import ID_MAX
from core.visibility import ensure_not_blind

Overview = api_permission(Role.ADMIN, Role.ADJUDICATOR, Role.RESEARCHER)
Adjudicator = api_permission(Role.ADMIN, Role.ADJUDICATOR)


class PairDetailOutput(serializers.Serializer):
    pair = serializers.IntegerField(source="pair.pk")
    problem = serializers.CharField(source="problem.external_id")
    statement = serializers.CharField(source="problem.statement")
    left = serializers.CharField(source="left_text", help_text="Proof A, shown on the left.")
    right = serializers.CharField(source="right_text", help_text="Proof B, shown on the right.")
    status = serializers.CharField(source="judgement.status")
    choice = serializers.CharField(
        source="shown", help_text="Your submitted choice (left, right, tie), or empty."
    )
    reason = serializers.CharField(source="judgement.reason")
    leased_until = serializers.DateTimeField(source="judgement.leased_until")


class NoPairLeftOutput(serializers.Serializer):
    detail = serializers.CharField()
    submitted = serializers.IntegerField()


NextPairOutput = PolymorphicProxySerializer(
    component_name="NextPairOutput",
    serializers=[PairDetailOutput, NoPairLeftOutput],
    resource_type_field_name=None,
)


def _problems(exc: Exception) -> ValidationError:
    return ValidationError({"problems": [str(exc)]})


class PairNextApi(APIView):
    permission_classes = [Anyone]

    @extend_schema(tags=["pairs"], request=None, responses={200: NextPairOutput})
    def post(self, request, slug):
        campaign = selectors.expert_campaign(slug=slug, user=request.user)
        try:
            judgement = pair_services.pair_next(campaign=campaign, expert=request.user)
        except pair_services.PairError as exc:
            raise _problems(exc) from exc
        if judgement is None:
            submitted = pair_selectors.expert_pair_totals(campaign=campaign, expert=request.user)
            return Response(
                NoPairLeftOutput({"detail": "No work left.", "submitted": submitted}).data
            )
        view = pair_selectors.pair_view_for_user(pair_id=judgement.pair_id, user=request.user)
        return Response(PairDetailOutput(view).data)


class PairDetailApi(APIView):
    permission_classes = [Anyone]

    @extend_schema(tags=["pairs"], responses=PairDetailOutput)
    def get(self, request, pair_id):
        view = pair_selectors.pair_view_for_user(pair_id=pair_id, user=request.user)
        return Response(PairDetailOutput(view).data)


class PairJudgementSubmitInput(serializers.Serializer):
    choice = serializers.ChoiceField(
        choices=pair_services.SHOWN_CHOICES, help_text="In the screen's order: left (A), right (B)."
    )
    reason = serializers.CharField(
        required=False, allow_blank=True, max_length=pair_services.REASON_MAX
    )


class PairJudgementSubmitApi(APIView):
    permission_classes = [Anyone]

    @extend_schema(tags=["pairs"], request=PairJudgementSubmitInput, responses=PairDetailOutput)
    def post(self, request, pair_id):
        view = pair_selectors.pair_view_for_user(pair_id=pair_id, user=request.user)
        params = PairJudgementSubmitInput(data=request.data)
        params.is_valid(raise_exception=True)
        try:
            pair_services.pair_judgement_submit(
                judgement_id=view.judgement.pk,
                expert=request.user,
                shown=params.validated_data["choice"],
                reason=params.validated_data.get("reason", ""),
            )
        except pair_services.PairError as exc:
            raise _problems(exc) from exc
        view = pair_selectors.pair_view_for_user(pair_id=pair_id, user=request.user)
        return Response(PairDetailOutput(view).data)


class PairsCreateInput(serializers.Serializer):
    proof_ids = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=ID_MAX), min_length=2, max_length=5000
    )
    max_per_problem = serializers.IntegerField(min_value=1, max_value=10_000, required=False)
    required_judgements = serializers.IntegerField(min_value=1, max_value=5, default=2)
    seed = serializers.IntegerField(min_value=0, max_value=2**31 - 1, default=0)


class PairsCreateOutput(serializers.Serializer):
    added = serializers.IntegerField()


class PairsCreateApi(APIView):
    permission_classes = [Admin]

    @extend_schema(tags=["pairs"], request=PairsCreateInput, responses={201: PairsCreateOutput})
    def post(self, request, slug):
        campaign = selectors.campaign_for_user(slug=slug, user=request.user, admin=True)
        params = PairsCreateInput(data=request.data)
        params.is_valid(raise_exception=True)
        try:
            added = pair_services.pairs_create(campaign=campaign, **params.validated_data)
        except pair_services.PairError as exc:
            raise _problems(exc) from exc
        return Response(PairsCreateOutput({"added": added}).data, status=status.HTTP_201_CREATED)


class PairSettleInput(serializers.Serializer):
    choice = serializers.ChoiceField(choices=PairChoice.values, help_text="Against the keys.")
    reason = serializers.CharField(max_length=pair_services.REASON_MAX)


class PairSettleOutput(serializers.Serializer):
    pair = serializers.IntegerField(source="pk")
    status = serializers.CharField()
    final_choice = serializers.CharField()
    final_source = serializers.CharField()


class PairSettleApi(APIView):
    permission_classes = [Adjudicator]

    @extend_schema(tags=["pairs"], request=PairSettleInput, responses=PairSettleOutput)
    def post(self, request, pair_id):
        pair = pair_selectors.pair_case_for_user(pair_id=pair_id, user=request.user)
        params = PairSettleInput(data=request.data)
        params.is_valid(raise_exception=True)
        try:
            pair = pair_services.pair_settle(
                pair_id=pair.pk, adjudicator=request.user, **params.validated_data
            )
        except pair_services.PairError as exc:
            raise _problems(exc) from exc
        return Response(PairSettleOutput(pair).data)


class ScoreOutput(serializers.Serializer):
    key = serializers.CharField()
    score = serializers.FloatField()
    low = serializers.FloatField()
    high = serializers.FloatField()
    wins = serializers.FloatField()
    comparisons = serializers.IntegerField()


class PairRatingsOutput(serializers.Serializer):
    outcomes = serializers.IntegerField(help_text="Final pairs the scores are fitted on.")
    generators = ScoreOutput(many=True)
    proofs = ScoreOutput(many=True, help_text="key: the proof's id.")


class PairRatingsApi(APIView):
    permission_classes = [Overview]

    @extend_schema(tags=["pairs"], responses=PairRatingsOutput)
    def get(self, request, slug):
        campaign = pair_selectors.pair_campaign_for_user(slug=slug, user=request.user)
        ensure_not_blind(
            request.user, pair_selectors.pair_proofs(campaign), "these scores", proof="pk"
        )
        return Response(PairRatingsOutput(pair_selectors.pair_ratings(campaign)).data)


class PairAssignInput(serializers.Serializer):
    pair = serializers.IntegerField(min_value=1, max_value=ID_MAX)
    expert = serializers.CharField(max_length=150)


class PairAssignOutput(serializers.Serializer):
    pair = serializers.IntegerField(source="pair_id")
    expert = serializers.CharField(source="expert.username")
    status = serializers.CharField()
    leased_until = serializers.DateTimeField()


class PairAssignApi(APIView):
    permission_classes = [Admin]

    @extend_schema(tags=["pairs"], request=PairAssignInput, responses={201: PairAssignOutput})
    def post(self, request, slug):
        campaign = selectors.campaign_for_user(slug=slug, user=request.user, admin=True)
        params = PairAssignInput(data=request.data)
        params.is_valid(raise_exception=True)
        expert = get_user_model().objects.filter(username=params.validated_data["expert"]).first()
        in_campaign = campaign.pair_items.filter(pk=params.validated_data["pair"]).exists()
        if expert is None or not in_campaign:
            raise ValidationError({"detail": "No such pair in this campaign, or no such user."})
        try:
            judgement = pair_services.pair_assign(
                pair_id=params.validated_data["pair"], expert=expert, assigned_by=request.user
            )
        except pair_services.PairError as exc:
            raise _problems(exc) from exc
        return Response(PairAssignOutput(judgement).data, status=status.HTTP_201_CREATED)
