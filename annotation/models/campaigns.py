"""Campaigns, their members and their items: the settings a campaign grades by (task kind, scale,
label policy, design, second opinion) and the one item per (campaign, proof, analysis)."""

from decimal import Decimal

from django.conf import settings
from django.db import models
from django.db.models import Q

from annotation.scales import Scale

DEFAULT_ERROR_TAXONOMY = [
    {"key": "proof_by_example", "label": "Proof by example"},
    {"key": "proposal_without_verification", "label": "Proposal without verification"},
    {"key": "inventing_wrong_facts", "label": "Inventing wrong facts"},
    {"key": "begging_the_question", "label": "Begging the question (circular reasoning)"},
    {"key": "trial_and_error", "label": "Solution by trial and error"},
    {"key": "calculation_mistake", "label": "Calculation mistake"},
    {"key": "wrong_logical_conclusion", "label": "Wrong logical conclusion"},
    {"key": "skipped_steps", "label": "Skipped steps"},
    {"key": "missing_cases", "label": "Missing cases"},
    {"key": "inequality_manipulation", "label": "Inequality manipulation error"},
    {"key": "other", "label": "Other"},
]


def default_error_taxonomy() -> list[dict]:
    return [dict(entry) for entry in DEFAULT_ERROR_TAXONOMY]


class TaskKind(models.TextChoices):
    PROOF_GRADING = "proof_grading", "Proof grading"
    ANALYSIS_REVIEW = "analysis_review", "Analysis review (meta-verification)"
    PAIRWISE = "pairwise", "Pairwise comparison of proofs"


class LabelPolicy(models.TextChoices):
    MEAN_FLOOR = "mean_floor", "Mean of the judgements, rounded down to the scale"
    LOWER = "lower", "The lower judgement"
    MEAN = "mean", "Mean of the judgements"


class SecondOpinionSource(models.TextChoices):
    OFF = "", "Off"
    VERIFIER = "verifier", "The verifier runs of the proof (verifier analyses)"
    GRADER = "grader", "A grader evaluation's predictions"


class ItemOrder(models.TextChoices):
    CREATED = "created", "Closest to complete, then oldest first"
    UNCERTAINTY = "uncertainty", "Most uncertain first (automatic graders' doubt)"


class ItemDesign(models.TextChoices):
    """How an item came to be (or not be) graded by experts: what the score intervals weight by
    (estimation.services.intervals). The inclusion probability beside it is P(experts grade it)."""

    ALL = "all", "Every item (chosen by hand or all of a selection)"
    UNIFORM = "uniform", "Uniform random share of the routing budget"
    ROUTED = "routed", "Routed by uncertainty (probability proportional)"
    NOT_CHOSEN = "not_chosen", "In the routing draw, not chosen"
    GOLD = "gold", "Gold item"
    UNKNOWN = "unknown", "No known probability (ranked before designs were recorded)"


class DoubleDesign(models.TextChoices):
    """How the second judgement of an item was decided; with its probability of being
    double-scored, what the agreement figures weight by."""

    UNIFORM = "uniform", "Seeded uniform sample of the double-scored share"
    ADAPTIVE = "adaptive", "Where disagreement is expected, with a uniform share kept"
    FIXED = "fixed", "Fixed by hand (every item of the batch, or none)"


class CampaignStatus(models.TextChoices):
    OPEN = "open", "Open"
    CLOSED = "closed", "Closed"


class MemberRole(models.TextChoices):
    ADMIN = "admin", "Admin"
    EXPERT = "expert", "Expert"
    ADJUDICATOR = "adjudicator", "Adjudicator"
    RESEARCHER = "researcher", "Researcher"


class Campaign(models.Model):
    slug = models.SlugField(max_length=80, unique=True)
    name = models.CharField(max_length=200)
    task_kind = models.CharField(
        max_length=20, choices=TaskKind.choices, default=TaskKind.PROOF_GRADING
    )
    scale = models.CharField(
        max_length=10,
        choices=Scale.choices,
        default=Scale.ZERO_TO_SEVEN,
        help_text="One of the named scales or any integer range a-b within 0-50 "
        "(annotation/scales.py; the services check it).",
    )
    double_share = models.DecimalField(
        max_digits=4,
        decimal_places=3,
        default=Decimal("0.40"),
        help_text="Share of items scored by two experts (1 = every item: a calibration round).",
    )
    double_design = models.CharField(
        max_length=10,
        choices=DoubleDesign.choices,
        default=DoubleDesign.UNIFORM,
        help_text="Uniform: a seeded sample of the share. Adaptive: the share is spent where the "
        "automatic graders (or the rater model) expect disagreement, a uniform part kept.",
    )
    double_uniform_share = models.DecimalField(
        max_digits=4,
        decimal_places=3,
        default=Decimal("0.30"),
        help_text="Adaptive double-scoring: the part of the second-judgement budget drawn "
        "uniformly at random (so every item can be double-scored).",
    )
    sample_seed = models.IntegerField(
        default=0, help_text="Seed of the double-scored sample (same seed, same sample)."
    )
    tolerance = models.DecimalField(
        max_digits=4,
        decimal_places=2,
        default=Decimal("1"),
        help_text="Largest difference between two judgements that still counts as agreement.",
    )
    label_policy = models.CharField(
        max_length=20, choices=LabelPolicy.choices, default=LabelPolicy.MEAN_FLOOR
    )
    error_taxonomy = models.JSONField(default=default_error_taxonomy, blank=True)
    guidelines = models.TextField(blank=True, help_text="Markdown shown on the grading page.")
    status = models.CharField(
        max_length=10, choices=CampaignStatus.choices, default=CampaignStatus.OPEN
    )
    lease_minutes = models.PositiveIntegerField(default=60)
    gold_rate = models.DecimalField(
        max_digits=4,
        decimal_places=3,
        default=Decimal("0"),
        help_text="Share of an expert's queue that is gold items, mixed in unannounced.",
    )
    fast_seconds = models.PositiveIntegerField(
        default=60, help_text="Grades submitted faster than this are flagged."
    )
    is_calibration = models.BooleanField(
        default=False,
        help_text="A calibration round: gold items with feedback after each submission; its "
        "grades never become labels (see the calibration app).",
    )
    calibration_required = models.BooleanField(
        default=False,
        help_text="Kept by the calibration requirement services: experts need a passed round "
        "before they receive items (read without a query by assignment).",
    )
    generator_config = models.ForeignKey(
        "rubrics.GeneratorConfig",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="campaigns",
        help_text="The frozen generator configuration the campaign's schemes should come from.",
    )
    second_opinion = models.CharField(
        max_length=10,
        choices=SecondOpinionSource.choices,
        default=SecondOpinionSource.OFF,
        blank=True,
        help_text="After an expert submits, reveal this automatic opinion of the proof; the "
        "expert may then revise once, with a reason. Off: nothing automatic is ever shown.",
    )
    second_opinion_from = models.CharField(
        max_length=200,
        blank=True,
        help_text="Only this verifier (model name) or grader evaluation (its name); empty: "
        "every verifier's analyses, or the newest grader evaluation that predicted the proof.",
    )
    # Routing expert effort by uncertainty (estimation.routing ranks; assignment serves by rank).
    item_order = models.CharField(
        max_length=12,
        choices=ItemOrder.choices,
        default=ItemOrder.CREATED,
        help_text="The order in which experts are given the items.",
    )
    routing_budget = models.DecimalField(
        max_digits=4,
        decimal_places=3,
        null=True,
        blank=True,
        help_text="Share of the ranked items experts grade (the most uncertain); the rest are "
        "labelled automatically where the labelling loop is confident, held otherwise. "
        "Empty: every item.",
    )
    routing_uniform_share = models.DecimalField(
        max_digits=4,
        decimal_places=3,
        default=Decimal("0.25"),
        help_text="Part of the routing budget drawn uniformly at random; the rest is drawn with "
        "probabilities proportional to uncertainty. 0: the most uncertain items, no random "
        "share (score intervals cannot then be made valid).",
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(double_share__gte=0) & Q(double_share__lte=1),
                name="campaign_double_share_0_1",
            ),
            models.CheckConstraint(
                condition=Q(gold_rate__gte=0) & Q(gold_rate__lte=1),
                name="campaign_gold_rate_0_1",
            ),
            models.CheckConstraint(condition=Q(lease_minutes__gte=1), name="campaign_lease_min_1"),
            models.CheckConstraint(
                condition=Q(routing_budget__isnull=True)
                | (Q(routing_budget__gt=0) & Q(routing_budget__lte=1)),
                name="campaign_routing_budget_0_1",
            ),
            models.CheckConstraint(
                condition=Q(routing_uniform_share__gte=0) & Q(routing_uniform_share__lte=1),
                name="campaign_routing_uniform_share_0_1",
            ),
            models.CheckConstraint(
                condition=Q(double_uniform_share__gt=0) & Q(double_uniform_share__lte=1),
                name="campaign_double_uniform_share_0_1",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def is_open(self) -> bool:
        return self.status == CampaignStatus.OPEN

    def taxonomy_labels(self) -> dict[str, str]:
        return {entry["key"]: entry["label"] for entry in self.error_taxonomy}


class CampaignMember(models.Model):
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="members")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="campaign_memberships"
    )
    role = models.CharField(max_length=20, choices=MemberRole.choices, default=MemberRole.EXPERT)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["campaign_id", "role", "user_id"]
        constraints = [
            models.UniqueConstraint(
                fields=["campaign", "user", "role"], name="campaign_member_unique"
            )
        ]

    def __str__(self) -> str:
        return f"{self.user_id} is {self.role} of {self.campaign_id}"


class Item(models.Model):
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="items")
    proof = models.ForeignKey("problems.Proof", on_delete=models.PROTECT, related_name="items")
    analysis = models.ForeignKey(
        "problems.VerifierAnalysis",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="items",
    )
    scheme = models.ForeignKey(
        "rubrics.MarkingScheme",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="items",
        help_text="The approved scheme version pinned when the item was created (none if the "
        "problem had no approved scheme).",
    )
    required_judgements = models.PositiveSmallIntegerField(default=1)
    is_gold = models.BooleanField(default=False)
    is_final = models.BooleanField(default=False)
    judgements_visible = models.BooleanField(default=False)
    submitted_count = models.PositiveSmallIntegerField(
        default=0, help_text="Submitted judgements (kept by grade_submit under the item's lock)."
    )
    needs_work = models.BooleanField(
        default=True, help_text="Fewer submitted judgements than required (the queue's index)."
    )
    # Why the item was chosen (estimation.routing): rank and uncertainty when it was last ranked.
    route_rank = models.PositiveIntegerField(
        null=True, blank=True, help_text="1 = most uncertain, when the item was ranked."
    )
    route_uncertainty = models.FloatField(null=True, blank=True)
    route_components = models.JSONField(default=dict, blank=True)
    route_ranked_at = models.DateTimeField(null=True, blank=True)
    route_held = models.BooleanField(
        default=False,
        help_text="Beyond the campaign's routing budget: not served to experts.",
    )
    # The sampling design (estimation.services.intervals and adjudication.agreement weight by
    # it): how the item was chosen for experts and its probability of being chosen; how its
    # second judgement was decided and its probability of being double-scored.
    design = models.CharField(max_length=12, choices=ItemDesign.choices, default=ItemDesign.ALL)
    inclusion_probability = models.FloatField(
        null=True,
        blank=True,
        default=1.0,
        help_text="P(experts grade the item) under its design; empty: not known.",
    )
    double_design = models.CharField(
        max_length=10, choices=DoubleDesign.choices, default=DoubleDesign.FIXED
    )
    double_probability = models.FloatField(
        null=True,
        blank=True,
        help_text="P(the item is double-scored) under its double design; empty: not known.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["campaign_id", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["campaign", "proof"],
                condition=Q(analysis__isnull=True),
                name="item_campaign_proof_unique",
            ),
            models.UniqueConstraint(
                fields=["campaign", "proof", "analysis"],
                condition=Q(analysis__isnull=False),
                name="item_campaign_proof_analysis_unique",
            ),
            models.CheckConstraint(
                condition=Q(required_judgements__gte=1), name="item_required_at_least_1"
            ),
        ]
        indexes = [
            models.Index(fields=["campaign", "is_final", "is_gold"], name="item_queue"),
            models.Index(
                "campaign",
                models.F("submitted_count").desc(),
                "id",
                condition=Q(needs_work=True, is_final=False, is_gold=False),
                name="item_open_queue",
            ),
            # the same walk in a campaign ordered by uncertainty: rank 1 first, unranked last
            # (PostgreSQL's ascending order puts nulls last)
            models.Index(
                "campaign",
                models.F("submitted_count").desc(),
                "route_rank",
                "id",
                condition=Q(needs_work=True, is_final=False, is_gold=False, route_held=False),
                name="item_ranked_queue",
            ),
        ]

    def __str__(self) -> str:
        return f"item {self.pk} of campaign {self.campaign_id}"
