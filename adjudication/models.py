"""Adjudication cases, their event log, and the one final label per item.

Writes go through adjudication.services, reads through adjudication.selectors. Held by the
database: one unresolved case per item, a resolved case names its resolution, one final label
per item (OneToOne), span offsets ordered.
"""

from django.conf import settings
from django.db import models
from django.db.models import Q


class CaseStatus(models.TextChoices):
    OPEN = "open", "Open"
    ASSIGNED = "assigned", "Assigned"
    RETURNED = "returned", "Returned to the experts"
    RESOLVED = "resolved", "Resolved"


class OpenedReason(models.TextChoices):
    DISAGREEMENT = "disagreement", "Disagreement beyond the tolerance"
    MANUAL = "manual", "Sent by an admin"


class Resolution(models.TextChoices):
    ACCEPTED = "accepted", "One judgement accepted"
    NEW_SCORE = "new_score", "New score recorded"
    AGREED = "agreed", "The experts agreed after revising"


class AdjudicationCase(models.Model):
    item = models.ForeignKey(
        "annotation.Item", on_delete=models.CASCADE, related_name="adjudication_cases"
    )
    status = models.CharField(max_length=10, choices=CaseStatus.choices, default=CaseStatus.OPEN)
    opened_reason = models.CharField(max_length=20, choices=OpenedReason.choices)
    disagreement = models.DecimalField(
        max_digits=5, decimal_places=2, default=0, help_text="Highest minus lowest score."
    )
    opened_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    assigned_to = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="adjudication_cases",
    )
    resolution = models.CharField(max_length=20, choices=Resolution.choices, blank=True)
    accepted_grade = models.ForeignKey(
        "annotation.Grade", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    score = models.DecimalField(
        max_digits=4, decimal_places=2, null=True, blank=True, help_text="The resolved score."
    )
    awards = models.JSONField(
        default=dict, blank=True, help_text="Checkpoint awards of a new score."
    )
    rationale = models.TextField(blank=True)
    resolved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    resolved_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-disagreement", "created_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["item"],
                condition=~Q(status="resolved"),
                name="case_one_unresolved_per_item",
            ),
            models.CheckConstraint(
                condition=~Q(status="resolved") | ~Q(resolution=""),
                name="case_resolved_has_resolution",
            ),
        ]
        indexes = [models.Index(fields=["status", "-disagreement"], name="case_queue")]

    def __str__(self) -> str:
        return f"case {self.pk} on item {self.item_id} ({self.status})"

    @property
    def is_resolved(self) -> bool:
        return self.status == CaseStatus.RESOLVED


class EventKind(models.TextChoices):
    OPENED = "opened", "Opened"
    ASSIGNED = "assigned", "Assigned"
    UNASSIGNED = "unassigned", "Unassigned"
    RETURNED = "returned", "Returned to the experts"
    COMMENT = "comment", "Comment"
    REVISED = "revised", "A judgement was revised"
    RESOLVED = "resolved", "Resolved"


class CaseEvent(models.Model):
    """Everything that happens to a case, in order (the log and the comment thread)."""

    case = models.ForeignKey(AdjudicationCase, on_delete=models.CASCADE, related_name="events")
    kind = models.CharField(max_length=20, choices=EventKind.choices)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    text = models.TextField(blank=True)
    data = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["case_id", "created_at", "id"]

    def __str__(self) -> str:
        return f"{self.kind} on case {self.case_id}"


class AdjudicatedSpan(models.Model):
    """An error span the adjudicator marked with a new score (offsets into Proof.text)."""

    case = models.ForeignKey(AdjudicationCase, on_delete=models.CASCADE, related_name="spans")
    start = models.PositiveIntegerField()
    end = models.PositiveIntegerField()
    quote = models.TextField()
    category = models.CharField(max_length=60)
    note = models.TextField(blank=True)

    class Meta:
        ordering = ["case_id", "start", "end", "id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(end__gt=models.F("start")), name="adjudicated_span_ordered"
            )
        ]

    def __str__(self) -> str:
        return f"{self.category} [{self.start}:{self.end}]"


class LabelSource(models.TextChoices):
    AGREEMENT = "agreement", "Agreement of the experts"
    ADJUDICATION = "adjudication", "Adjudication"
    SINGLE = "single", "Single judgement"
    IMPORTED = "imported", "Imported with a dataset"
    AUTOMATIC = "automatic", "Automatic"


class FinalLabel(models.Model):
    """The one label of an item that exports read, with where it came from."""

    item = models.OneToOneField(
        "annotation.Item", on_delete=models.CASCADE, related_name="final_label"
    )
    value = models.DecimalField(max_digits=6, decimal_places=2, help_text="On the campaign scale.")
    scale = models.CharField(max_length=10)
    source = models.CharField(max_length=20, choices=LabelSource.choices)
    policy = models.TextField(blank=True, help_text="How the value was derived, in words.")
    scheme = models.ForeignKey(
        "rubrics.MarkingScheme", on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    grade_ids = models.JSONField(default=list, blank=True)
    native_value = models.DecimalField(max_digits=8, decimal_places=3, null=True, blank=True)
    native_max = models.DecimalField(max_digits=8, decimal_places=3, null=True, blank=True)
    case = models.ForeignKey(
        AdjudicationCase, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["item_id"]
        indexes = [models.Index(fields=["source"], name="final_label_source")]

    def __str__(self) -> str:
        return f"{self.value} ({self.source}) for item {self.item_id}"
