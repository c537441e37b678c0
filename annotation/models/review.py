"""Analysis review (meta-verification, DeepSeekMath-V2 appendix A.3): an expert's review of a
verifier analysis, its defects, and the defects an LLM pre-split suggests."""

from decimal import Decimal

from django.db import models
from django.db.models import Q

from annotation.models.grading import Grade


class MetaReview(models.Model):
    """An expert's judgement of a verifier analysis: the A.3 rubric beside the Grade it belongs
    to. The Grade carries what every judgement has (item, expert, status, score = the final
    rating, time, revisions), so assignment, blindness, progress and adjudication treat analysis
    reviews exactly as proof grades; this row holds the rubric's details."""

    grade = models.OneToOneField(Grade, on_delete=models.CASCADE, related_name="meta_review")
    expression_error = models.BooleanField(
        null=True, blank=True, help_text="Misquoted steps, typos, 'wrong' for 'not demonstrated'."
    )
    expression_note = models.TextField(blank=True)
    score_fits = models.BooleanField(
        null=True, blank=True, help_text="The analysis's score fits its defects (verifier rules)."
    )
    score_note = models.TextField(blank=True)
    derived_rating = models.DecimalField(max_digits=2, decimal_places=1, null=True, blank=True)
    derived_reason = models.TextField(blank=True)
    override = models.DecimalField(max_digits=2, decimal_places=1, null=True, blank=True)
    override_reason = models.TextField(blank=True)
    value = models.DecimalField(
        max_digits=2,
        decimal_places=1,
        null=True,
        blank=True,
        help_text="The final rating: the override when given, else the derived rating.",
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["grade_id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(override__isnull=True) | ~Q(override_reason=""),
                name="meta_review_override_has_reason",
            ),
            models.CheckConstraint(
                condition=Q(override__isnull=True)
                | Q(override__in=[Decimal("0"), Decimal("0.5"), Decimal("1")]),
                name="meta_review_override_ternary",
            ),
            models.CheckConstraint(
                condition=Q(value__isnull=True)
                | Q(value__in=[Decimal("0"), Decimal("0.5"), Decimal("1")]),
                name="meta_review_value_ternary",
            ),
        ]

    def __str__(self) -> str:
        return f"meta-review of grade {self.grade_id}"


class MetaDefect(models.Model):
    """One defect the analysis claims, split out by the expert (offsets into the analysis
    text), with the expert's judgement and the proof passage it concerns (offsets into
    Proof.text)."""

    review = models.ForeignKey(MetaReview, on_delete=models.CASCADE, related_name="defects")
    position = models.PositiveSmallIntegerField(default=0)
    start = models.PositiveIntegerField(help_text="Offset into the analysis text.")
    end = models.PositiveIntegerField()
    quote = models.TextField()
    exists = models.BooleanField(null=True, blank=True)
    accurate = models.BooleanField(null=True, blank=True)
    note = models.TextField(blank=True)
    proof_start = models.PositiveIntegerField(null=True, blank=True)
    proof_end = models.PositiveIntegerField(null=True, blank=True)
    proof_quote = models.TextField(blank=True)
    from_suggestion = models.BooleanField(
        default=False, help_text="Accepted from the LLM pre-split, not selected by hand."
    )

    class Meta:
        ordering = ["review_id", "position", "id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(end__gt=models.F("start")), name="meta_defect_ordered"
            ),
            models.CheckConstraint(
                condition=Q(proof_start__isnull=True) | Q(proof_end__gt=models.F("proof_start")),
                name="meta_defect_proof_ordered",
            ),
        ]

    def __str__(self) -> str:
        return f"defect [{self.start}:{self.end}] of review {self.review_id}"


class DefectSuggestion(models.Model):
    """A claimed defect proposed by an LLM pre-split of the analysis (shown as a suggestion;
    the expert accepts or ignores it). Offsets into the analysis text."""

    analysis = models.ForeignKey(
        "problems.VerifierAnalysis", on_delete=models.CASCADE, related_name="defect_suggestions"
    )
    start = models.PositiveIntegerField()
    end = models.PositiveIntegerField()
    quote = models.TextField()
    source = models.CharField(max_length=200, help_text="The endpoint and model that proposed it.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["analysis_id", "start", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["analysis", "start", "end"], name="defect_suggestion_unique"
            ),
            models.CheckConstraint(
                condition=Q(end__gt=models.F("start")), name="defect_suggestion_ordered"
            ),
        ]

    def __str__(self) -> str:
        return f"suggested defect [{self.start}:{self.end}] of analysis {self.analysis_id}"
