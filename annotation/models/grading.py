"""Grades with their error spans and history, and each expert's count of submitted grades."""

from django.conf import settings
from django.db import models
from django.db.models import Q

from annotation.models.campaigns import Campaign, Item


class ExpertProgress(models.Model):
    """How many grades an expert has submitted in a campaign, kept by the services that submit
    one (annotation.services.progress), in the submission's transaction: the grading page reads
    "item k of N" from this row instead of counting the expert's grades."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="+")
    expert = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    submitted = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["campaign", "expert"], name="expert_progress_unique")
        ]

    def __str__(self) -> str:
        return f"{self.expert_id} submitted {self.submitted} in {self.campaign_id}"


class GradeStatus(models.TextChoices):
    DRAFT = "draft", "Draft"
    SUBMITTED = "submitted", "Submitted"


class Grade(models.Model):
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="grades")
    expert = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="grades"
    )
    status = models.CharField(max_length=10, choices=GradeStatus.choices, default=GradeStatus.DRAFT)
    score = models.DecimalField(max_digits=4, decimal_places=2, null=True, blank=True)
    computed_score = models.DecimalField(max_digits=4, decimal_places=2, null=True, blank=True)
    awards = models.JSONField(default=dict, blank=True)
    deductions = models.JSONField(default=list, blank=True)
    via_equivalent = models.JSONField(default=list, blank=True)
    score_note = models.TextField(blank=True)
    comment = models.TextField(blank=True)
    step_verdicts = models.JSONField(default=dict, blank=True)
    first_wrong_step = models.PositiveIntegerField(null=True, blank=True)
    seconds_spent = models.PositiveIntegerField(default=0)
    submit_key = models.CharField(
        max_length=64, blank=True, help_text="Idempotency key of the submission."
    )
    version = models.PositiveIntegerField(
        default=0,
        help_text="Incremented on every write; a draft or submission names the version it was "
        "based on, and one based on an older version is refused (409).",
    )
    # Where the stored version was written from (annotation.services.grade_checks.Origin): a
    # conflict names its cause from them (this page, another tab, another device).
    origin_page = models.CharField(
        max_length=64,
        blank=True,
        help_text="The page load (or client run) that wrote this version.",
    )
    origin_browser = models.CharField(
        max_length=64,
        blank=True,
        help_text="The browser that wrote this version, as it names itself.",
    )
    origin_session = models.CharField(
        max_length=64,
        blank=True,
        help_text="A digest of the session or token that wrote this version (never the key).",
    )
    submitted_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    scheme = models.ForeignKey(
        "rubrics.MarkingScheme",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="grades",
    )
    sequence = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="The grade's place among its expert's submissions in the campaign (1 = the "
        "first), given when it is submitted (annotation.services.progress).",
    )

    class Meta:
        ordering = ["item_id", "id"]
        constraints = [
            models.UniqueConstraint(fields=["item", "expert"], name="grade_item_expert"),
            models.CheckConstraint(
                # every campaign scale lies within 0-50 (annotation.scales.RANGE_MAX); the
                # services hold a score to its campaign's own scale
                condition=Q(score__isnull=True) | (Q(score__gte=0) & Q(score__lte=50)),
                name="grade_score_0_50",
            ),
            models.CheckConstraint(
                condition=Q(status=GradeStatus.DRAFT) | Q(score__isnull=False),
                name="grade_submitted_has_score",
            ),
        ]
        indexes = [
            models.Index(fields=["item", "status"], name="grade_item_status"),
            models.Index(fields=["expert", "sequence"], name="grade_expert_sequence"),
        ]

    def __str__(self) -> str:
        return f"grade of item {self.item_id} by {self.expert_id} ({self.status})"

    @property
    def is_submitted(self) -> bool:
        return self.status == GradeStatus.SUBMITTED

    @property
    def span_list(self) -> list:
        """The grade's error spans in their order: as the write that just made them left them
        on this instance (`written_spans`, no query), else read (from a prefetch if any)."""
        written = self.__dict__.get("written_spans")
        return list(self.spans.all()) if written is None else written


class ErrorSpan(models.Model):
    grade = models.ForeignKey(Grade, on_delete=models.CASCADE, related_name="spans")
    start = models.PositiveIntegerField(help_text="Offset into Proof.text (characters).")
    end = models.PositiveIntegerField()
    quote = models.TextField()
    category = models.CharField(max_length=60)
    note = models.TextField(blank=True)

    class Meta:
        ordering = ["grade_id", "start", "end", "id"]
        constraints = [
            models.CheckConstraint(condition=Q(end__gt=models.F("start")), name="span_ordered")
        ]

    def __str__(self) -> str:
        return f"{self.category} [{self.start}:{self.end}]"


class GradeRevision(models.Model):
    grade = models.ForeignKey(Grade, on_delete=models.CASCADE, related_name="revisions")
    changed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    changed_at = models.DateTimeField(auto_now_add=True)
    old = models.JSONField(default=dict)
    new = models.JSONField(default=dict)

    class Meta:
        ordering = ["grade_id", "changed_at", "id"]

    def __str__(self) -> str:
        return f"revision of grade {self.grade_id} at {self.changed_at:%Y-%m-%d %H:%M}"
