"""API of the adjudication app: cases (adjudicators and admins only; a case on an item one
graded answers 404), resolving, final labels, agreement figures. One APIView per operation."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.generics import get_object_or_404
from rest_framework.permissions import BasePermission
from rest_framework.response import Response
from rest_framework.views import APIView

from adjudication import selectors
from adjudication.metrics import campaign_agreement_cached, second_opinion_figures
from adjudication.models import CaseStatus, LabelSource
from adjudication.rater_model import rater_model_summary
from adjudication.services import AdjudicationError, case_resolve, case_return
from annotation.models import Campaign
from core.api import ListApi
from core.roles import Role, api_permission
from core.values import ID_MAX

LabelReader = api_permission(Role.ADMIN, Role.RESEARCHER, Role.ADJUDICATOR)
FiguresReader = api_permission(*selectors.AGREEMENT_READERS)


class IsAdjudicator(BasePermission):
    message = "Only adjudicators and admins work on adjudication cases."

    def has_permission(self, request, view) -> bool:
        return bool(request.user.is_authenticated and selectors.may_adjudicate(request.user))


class CaseSummaryOutput(serializers.Serializer):
    id = serializers.IntegerField()
    item_id = serializers.IntegerField()
    campaign = serializers.CharField(source="item.campaign.slug")
    problem = serializers.CharField(source="item.proof.problem.external_id")
    status = serializers.CharField()
    opened_reason = serializers.CharField()
    disagreement = serializers.DecimalField(max_digits=5, decimal_places=2)
    assigned_to = serializers.CharField(
        source="assigned_to.username", default=None, allow_null=True
    )
    created_at = serializers.DateTimeField()


class JudgementSpanOutput(serializers.Serializer):
    start = serializers.IntegerField()
    end = serializers.IntegerField()
    quote = serializers.CharField()
    category = serializers.CharField()
    note = serializers.CharField()


class JudgementOutput(serializers.Serializer):
    grade_id = serializers.IntegerField(source="grade.pk")
    expert = serializers.CharField(source="name")
    score = serializers.DecimalField(source="grade.score", max_digits=4, decimal_places=2)
    computed_score = serializers.DecimalField(
        source="grade.computed_score", max_digits=4, decimal_places=2, allow_null=True
    )
    awards = serializers.JSONField(source="grade.awards")
    deductions = serializers.JSONField(source="grade.deductions")
    comment = serializers.CharField(source="grade.comment")
    score_note = serializers.CharField(source="grade.score_note")
    spans = serializers.SerializerMethodField()

    def get_spans(self, obj) -> list[dict]:
        return JudgementSpanOutput([row["span"] for row in obj["spans"]], many=True).data


class CaseEventOutput(serializers.Serializer):
    kind = serializers.CharField(source="event.kind")
    who = serializers.CharField()
    text = serializers.CharField(source="event.text")
    created_at = serializers.DateTimeField(source="event.created_at")


class CaseDetailOutput(CaseSummaryOutput):
    proof_id = serializers.IntegerField(source="item.proof_id")
    scheme_id = serializers.IntegerField(source="item.scheme_id", allow_null=True)
    resolution = serializers.CharField()
    score = serializers.DecimalField(max_digits=4, decimal_places=2, allow_null=True)
    rationale = serializers.CharField()
    judgements = JudgementOutput(many=True, source="sheet.judgements")
    events = CaseEventOutput(many=True, source="sheet.events")


def _case_data(case) -> dict:
    case.sheet = selectors.case_sheet(case)
    return CaseDetailOutput(case).data


def _list_filters(request, params: type[serializers.Serializer]) -> tuple[dict, int | None]:
    """The query string checked by `params` (400 if invalid), and the id of the campaign its
    `campaign` slug names (404 if none does; None when no slug is given)."""
    filters = params(data=request.query_params)
    filters.is_valid(raise_exception=True)
    campaign_id = None
    if filters.validated_data.get("campaign"):
        campaign_id = get_object_or_404(Campaign, slug=filters.validated_data["campaign"]).pk
    return filters.validated_data, campaign_id


class CaseListInput(serializers.Serializer):
    status = serializers.ChoiceField(choices=CaseStatus.choices, required=False)
    campaign = serializers.SlugField(required=False)
    mine = serializers.BooleanField(required=False, default=False)


class CaseListApi(ListApi):
    permission_classes = [IsAdjudicator]

    @extend_schema(
        parameters=[CaseListInput], responses=CaseSummaryOutput(many=True), tags=["adjudication"]
    )
    def get(self, request):
        filters, campaign_id = _list_filters(request, CaseListInput)
        cases = selectors.cases_for_user(
            request.user,
            status=filters.get("status"),
            campaign_id=campaign_id,
            mine=filters["mine"],
        )
        return self.page(cases, CaseSummaryOutput)


class CaseDetailApi(APIView):
    permission_classes = [IsAdjudicator]

    @extend_schema(responses=CaseDetailOutput, tags=["adjudication"])
    def get(self, request, case_id: int):
        return Response(_case_data(selectors.case_for_adjudicator(request.user, case_id)))


class CaseResolveInput(serializers.Serializer):
    action = serializers.ChoiceField(choices=["accept", "new_score", "return"])
    grade_id = serializers.IntegerField(required=False, min_value=1, max_value=ID_MAX)
    score = serializers.DecimalField(max_digits=4, decimal_places=2, required=False)
    awards = serializers.DictField(required=False)
    spans = serializers.ListField(child=serializers.DictField(), required=False)
    rationale = serializers.CharField(required=False, allow_blank=True, default="")
    question = serializers.CharField(required=False, allow_blank=True, default="")


class CaseResolveApi(APIView):
    permission_classes = [IsAdjudicator]

    @extend_schema(request=CaseResolveInput, responses=CaseDetailOutput, tags=["adjudication"])
    def post(self, request, case_id: int):
        case = selectors.case_for_adjudicator(request.user, case_id)
        data = CaseResolveInput(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        try:
            if values["action"] == "return":
                case_return(case=case, user=request.user, question=values["question"])
            else:
                case_resolve(
                    case=case,
                    user=request.user,
                    action=values["action"],
                    grade_id=values.get("grade_id"),
                    score=values.get("score"),
                    awards=values.get("awards"),
                    spans=values.get("spans"),
                    rationale=values["rationale"],
                )
        except AdjudicationError as exc:
            if "already resolved" in str(exc):
                return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
            raise ValidationError({"detail": str(exc)}) from exc
        return Response(_case_data(selectors.case_for_adjudicator(request.user, case_id)))


class FinalLabelOutput(serializers.Serializer):
    item_id = serializers.IntegerField()
    campaign = serializers.CharField(source="item.campaign.slug")
    problem = serializers.CharField(source="item.proof.problem.external_id")
    proof_id = serializers.IntegerField(source="item.proof_id")
    value = serializers.DecimalField(max_digits=6, decimal_places=2)
    scale = serializers.CharField()
    source = serializers.CharField()
    policy = serializers.CharField()
    scheme_id = serializers.IntegerField(allow_null=True)
    grade_ids = serializers.JSONField()
    native_value = serializers.DecimalField(max_digits=8, decimal_places=3, allow_null=True)
    native_max = serializers.DecimalField(max_digits=8, decimal_places=3, allow_null=True)
    is_gold = serializers.BooleanField(source="item.is_gold")
    updated_at = serializers.DateTimeField()


class FinalLabelListInput(serializers.Serializer):
    campaign = serializers.SlugField(required=False)
    source = serializers.ChoiceField(choices=LabelSource.choices, required=False)


class FinalLabelListApi(ListApi):
    permission_classes = [LabelReader]

    @extend_schema(
        parameters=[FinalLabelListInput],
        responses=FinalLabelOutput(many=True),
        tags=["adjudication"],
    )
    def get(self, request):
        filters, campaign_id = _list_filters(request, FinalLabelListInput)
        labels = selectors.final_labels(
            campaign_id=campaign_id, source=filters.get("source"), user=request.user
        )
        return self.page(labels, FinalLabelOutput)


def _figures(figures) -> dict:
    return {
        "n": figures.n,
        **{name: figures.values[name] for name in figures.values},
        "ci": {name: figures.cis[name] for name in figures.cis},
    }


class FastGradeOutput(serializers.Serializer):
    grade_id = serializers.IntegerField()
    item_id = serializers.IntegerField()
    expert = serializers.CharField()
    seconds = serializers.IntegerField()


class RevealChangesOutput(serializers.Serializer):
    revealed = serializers.IntegerField(help_text="Judgements followed by an automatic opinion.")
    without_opinion = serializers.IntegerField(help_text="Reveals with no opinion to show.")
    comparison_scales = serializers.ListField(child=serializers.CharField())
    changed = serializers.IntegerField(
        help_text="Revisions after the reveal, read on the campaign's own scale."
    )
    changed_share = serializers.FloatField(allow_null=True)
    raised = serializers.IntegerField(help_text="Changes up, on the campaign's own scale.")
    lowered = serializers.IntegerField(help_text="Changes down, on the campaign's own scale.")
    toward_automatic = serializers.IntegerField()
    away_from_automatic = serializers.IntegerField()
    level_with_automatic = serializers.IntegerField()
    with_final = serializers.IntegerField()
    toward_final = serializers.IntegerField()
    away_from_final = serializers.IntegerField()
    level_with_final = serializers.IntegerField()
    mean_shift = serializers.FloatField(
        allow_null=True, help_text="Mean signed change (after - before), campaign's own scale."
    )
    mean_size = serializers.FloatField(
        allow_null=True, help_text="Mean absolute change, on the campaign's own scale."
    )


def _reveal(campaign) -> dict | None:
    found = second_opinion_figures(campaign)
    if found is None:
        return None
    changes = found.changes
    body = {"without_opinion": found.without_opinion, "comparison_scales": found.scales}
    for name in RevealChangesOutput().fields:
        body.setdefault(name, getattr(changes, name, None))
    return body


class RaterOutput(serializers.Serializer):
    key = serializers.CharField(help_text="expert:<user id>, verifier:<name>, grader:<id>, ...")
    name = serializers.CharField()
    kind = serializers.ChoiceField(choices=["expert", "verifier", "grader", "imported"])
    judgements = serializers.IntegerField()
    error_rate = serializers.FloatField(help_text="Estimated P(wrong class), prior-weighted.")
    confusion = serializers.ListField(
        child=serializers.ListField(child=serializers.FloatField()),
        help_text="confusion[true][given] = P(the rater gives `given` | the class is `true`).",
    )


class LeastConfidentOutput(serializers.Serializer):
    item_id = serializers.IntegerField()
    value = serializers.DecimalField(max_digits=6, decimal_places=2)
    source = serializers.CharField()
    confidence = serializers.FloatField()


class ReliabilityBinOutput(serializers.Serializer):
    low = serializers.FloatField()
    high = serializers.FloatField()
    n = serializers.IntegerField(help_text="Held-out cases whose stated confidence is in the bin.")
    confidence = serializers.FloatField(help_text="Their mean stated confidence.")
    accuracy = serializers.FloatField(help_text="The share of them whose predicted class came.")


class CalibrationOutput(serializers.Serializer):
    """Measured when the model was fitted, on held-out cases: gold items with their class
    hidden, and one removed judgement of each item two or more experts graded."""

    cases = serializers.IntegerField()
    gold_cases = serializers.IntegerField()
    judgement_cases = serializers.IntegerField()
    enough = serializers.BooleanField(
        help_text="False: fewer than `minimum` cases, too little evidence; no error is stated."
    )
    minimum = serializers.IntegerField()
    ece = serializers.FloatField(
        allow_null=True, help_text="Expected calibration error (10 equal-width bins)."
    )
    ece_low = serializers.FloatField(allow_null=True, help_text="95% bootstrap interval (cases).")
    ece_high = serializers.FloatField(allow_null=True)
    rows = ReliabilityBinOutput(many=True, help_text="The reliability diagram's bins.")


class RaterModelOutput(serializers.Serializer):
    """The campaign's last rater-model fit over experts and automatic graders (the model chosen
    by held-out calibration), its labels' confidence and its measured calibration."""

    fitted_at = serializers.DateTimeField(source="fit.fitted_at")
    classes = serializers.ListField(child=serializers.CharField(), source="fit.classes")
    priors = serializers.ListField(child=serializers.FloatField(), source="fit.priors")
    items = serializers.IntegerField(source="fit.items")
    gold = serializers.IntegerField(source="fit.gold")
    judgements = serializers.IntegerField(source="fit.judgements")
    iterations = serializers.IntegerField(source="fit.iterations")
    model = serializers.ChoiceField(
        choices=[
            "dawid-skene",
            "one-coin",
            "ordinal",
            "ordinal-shrunk",
            "dawid-skene-pooled",
        ],
        source="fit.model",
        help_text="The candidate of the least held-out log loss.",
    )
    heldout_scores = serializers.DictField(
        child=serializers.FloatField(),
        source="fit.heldout_scores",
        help_text="Each candidate's held-out log loss (empty: no held-out case).",
    )
    temperature = serializers.FloatField(
        source="fit.temperature", help_text="Softening of the posteriors (1: none)."
    )
    calibration = CalibrationOutput(
        allow_null=True,
        help_text="Null for a fit made before calibration was measured.",
    )
    raters = RaterOutput(many=True)
    labels = serializers.IntegerField()
    with_confidence = serializers.IntegerField()
    without_confidence = serializers.IntegerField(help_text="Labels set since the fit, with none.")
    stale = serializers.IntegerField(
        help_text="Labels changed since the fit: their confidence is the fit's, stale until the "
        "refit their change queued lands."
    )
    fit_age = serializers.CharField(
        source="freshness.words",
        help_text='The fit\'s age: "fitted 3 min ago, before the 2 latest changes; refit queued".',
    )
    changes_since_fit = serializers.IntegerField(source="freshness.changes")
    confidence_checked = serializers.BooleanField(
        source="freshness.checked",
        help_text="True: the confidences are backed by a calibration measured on enough "
        "held-out cases (`calibration.enough`). False: unchecked; read them as a ranking.",
    )
    confidence_caveat = serializers.CharField(
        source="freshness.caveat",
        help_text="When unchecked, what to read into the confidences (empty when checked).",
    )
    mean_confidence = serializers.FloatField(allow_null=True)
    below = serializers.IntegerField(help_text="Labels whose confidence is below `threshold`.")
    threshold = serializers.FloatField()
    least_confident = LeastConfidentOutput(many=True)


def rater_model_body(campaign) -> dict | None:
    summary = rater_model_summary(campaign)
    return None if summary is None else RaterModelOutput(summary).data


class AgreementOutput(serializers.Serializer):
    """A campaign's agreement figures. A figures object holds `n`, one value per figure and
    `ci` (each figure's interval, or null)."""

    campaign = serializers.CharField()
    scale = serializers.CharField()
    labels = serializers.ListField(child=serializers.FloatField())
    tolerance = serializers.CharField()
    calibration_round = serializers.BooleanField()
    overall = serializers.JSONField()
    weighting = serializers.CharField(
        help_text="Which weighting the campaign's figures and alpha used, in words."
    )
    design_weighted = serializers.BooleanField(
        help_text="True: each double-scored item counts 1 / its probability of being "
        "double-scored (adaptive double-scoring)."
    )
    krippendorff_alpha_ordinal = serializers.FloatField(allow_null=True)
    krippendorff_alpha_ci = serializers.ListField(
        child=serializers.FloatField(), allow_null=True, min_length=2, max_length=2
    )
    confusion_matrix = serializers.ListField(
        child=serializers.ListField(child=serializers.IntegerField())
    )
    pairs = serializers.ListField(
        child=serializers.JSONField(), help_text="Per pair of experts: `experts` and figures."
    )
    weeks = serializers.ListField(
        child=serializers.JSONField(), help_text="Per week (`week`, ISO date) and figures."
    )
    experts = serializers.JSONField()
    fast_grades = FastGradeOutput(many=True)
    second_opinion = RevealChangesOutput(
        allow_null=True,
        help_text="After the AI second opinion: how often experts changed and which way (null "
        "when no grade of the campaign was followed by a reveal).",
    )
    rater_model = RaterModelOutput(
        allow_null=True, help_text="Label confidence and each rater's confusion (null: not fitted)."
    )


class AgreementApi(APIView):
    permission_classes = [FiguresReader]

    @extend_schema(
        parameters=[OpenApiParameter("slug", str, OpenApiParameter.PATH)],
        responses=AgreementOutput,
        tags=["adjudication"],
    )
    def get(self, request, slug: str):
        campaign = selectors.agreement_campaign_for_user(request.user, slug)
        a = campaign_agreement_cached(campaign)
        return Response(
            {
                "campaign": campaign.slug,
                "scale": campaign.scale,
                "labels": a.labels,
                "tolerance": str(a.tolerance),
                "calibration_round": a.is_calibration,
                "overall": _figures(a.overall),
                "weighting": a.weighting,
                "design_weighted": a.weighted,
                "krippendorff_alpha_ordinal": a.alpha,
                "krippendorff_alpha_ci": a.alpha_ci,
                "confusion_matrix": a.confusion,
                "pairs": [
                    {"experts": list(row["experts"]), **_figures(row["figures"])} for row in a.pairs
                ],
                "weeks": [
                    {"week": row["week"].isoformat(), **_figures(row["figures"])} for row in a.weeks
                ],
                "experts": a.experts,
                "fast_grades": [
                    {
                        "grade_id": j.grade_id,
                        "item_id": j.item_id,
                        "expert": j.expert,
                        "seconds": j.seconds,
                    }
                    for j in a.fast
                ],
                "second_opinion": _reveal(campaign),
                "rater_model": rater_model_body(campaign),
            }
        )


class CheckpointOutput(serializers.Serializer):
    """One checkpoint's figures (adjudication.checkpoints; the CSV's columns say each)."""

    checkpoint = serializers.CharField(source="checkpoint_id")
    title = serializers.CharField()
    points = serializers.DecimalField(max_digits=5, decimal_places=2)
    proofs = serializers.IntegerField()
    double_scored = serializers.IntegerField()
    mean_award = serializers.FloatField(allow_null=True)
    percent_agreement = serializers.FloatField(source="agreement", allow_null=True)
    percent_agreement_ci = serializers.ListField(
        child=serializers.FloatField(), source="agreement_ci", allow_null=True
    )
    alpha = serializers.FloatField(allow_null=True, help_text="Krippendorff's ordinal alpha.")
    alpha_ci = serializers.ListField(child=serializers.FloatField(), allow_null=True)
    labelled = serializers.IntegerField()
    discrimination = serializers.FloatField(
        allow_null=True, help_text="Spearman's rank correlation of the award with the label."
    )
    discrimination_ci = serializers.ListField(child=serializers.FloatField(), allow_null=True)
    agreement_note = serializers.CharField(help_text="Why agreement is not stated, if it is not.")
    discrimination_note = serializers.CharField()
    flags = serializers.ListField(child=serializers.CharField())


class SchemeCheckpointsOutput(serializers.Serializer):
    scheme_id = serializers.IntegerField()
    problem = serializers.CharField()
    version = serializers.IntegerField()
    kind = serializers.CharField()
    grades = serializers.IntegerField()
    proofs = serializers.IntegerField()
    double_scored = serializers.IntegerField()
    checkpoints = CheckpointOutput(many=True)


class CheckpointsApi(APIView):
    """Each checkpoint of the schemes the campaign's grades used: agreement on its award and its
    discrimination, with 95% bootstrap intervals (as the checkpoints page)."""

    permission_classes = [FiguresReader]

    @extend_schema(
        parameters=[OpenApiParameter("slug", str, OpenApiParameter.PATH)],
        responses=SchemeCheckpointsOutput(many=True),
        tags=["adjudication"],
    )
    def get(self, request, slug: str):
        from adjudication.checkpoints import campaign_checkpoint_figures_cached

        campaign = selectors.agreement_campaign_for_user(request.user, slug)
        return Response(
            SchemeCheckpointsOutput(campaign_checkpoint_figures_cached(campaign), many=True).data
        )
