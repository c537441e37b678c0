"""Marking schemes: versioned per problem, with provenance, ratings and approval."""

from django.conf import settings
from django.db import models
from django.db.models import Q


class SchemeMethod(models.TextChoices):
    MANUAL = "manual", "Written by hand"
    IMPORTED = "imported", "Imported"
    PROOFBENCH = "proofbench", "ProofBench single call"
    REFGRADER_PLAIN = "refgrader_plain", "RefGrader: plain"
    REFGRADER_APPROACHABILITY = "refgrader_approachability", "RefGrader: approachability"
    REFGRADER_MILESTONES = "refgrader_milestones", "RefGrader: milestones"
    REFGRADER_HYBRID = "refgrader_hybrid", "RefGrader: hybrid"


class SchemeStatus(models.TextChoices):
    DRAFT = "draft", "Draft"
    APPROVED = "approved", "Approved"
    FROZEN = "frozen", "Frozen"


class MarkingScheme(models.Model):
    """One version of a problem's marking scheme. Grades point at the exact row they used."""

    problem = models.ForeignKey(
        "problems.Problem", on_delete=models.CASCADE, related_name="marking_schemes"
    )
    version = models.PositiveIntegerField()
    method = models.CharField(max_length=40, choices=SchemeMethod.choices)
    status = models.CharField(
        max_length=20, choices=SchemeStatus.choices, default=SchemeStatus.DRAFT, db_index=True
    )
    text = models.TextField(help_text="The scheme as Markdown, as written or generated.")
    guidelines = models.TextField(
        blank=True, help_text="Free grading guidance kept when it does not parse into checkpoints."
    )
    structure = models.JSONField(
        default=dict, blank=True, help_text="The parsed structure (rubrics.structure)."
    )
    validation = models.JSONField(
        default=list, blank=True, help_text="Validation messages, in words, for the person."
    )
    is_valid = models.BooleanField(default=False)
    previous = models.ForeignKey(
        "self", on_delete=models.SET_NULL, null=True, blank=True, related_name="next_versions"
    )
    provenance = models.JSONField(
        default=dict,
        blank=True,
        help_text="Model, prompt version, parameters, token usage; or the import's source.",
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    approved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    approved_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["problem_id", "-version"]
        constraints = [
            models.UniqueConstraint(fields=["problem", "version"], name="scheme_problem_version"),
            models.UniqueConstraint(
                fields=["problem"],
                condition=Q(status="approved"),
                name="scheme_one_approved_per_problem",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.problem_id} scheme v{self.version} ({self.status})"


class SchemeRating(models.Model):
    """An expert's 0-3 quality rating of one scheme version (ProofBench's scale)."""

    scheme = models.ForeignKey(MarkingScheme, on_delete=models.CASCADE, related_name="ratings")
    rater = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="scheme_ratings"
    )
    score = models.PositiveSmallIntegerField()
    comment = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["scheme", "rater"], name="rating_one_per_rater"),
            models.CheckConstraint(condition=Q(score__lte=3), name="rating_score_0_3"),
        ]

    def __str__(self) -> str:
        return f"{self.rater_id} rates scheme {self.scheme_id}: {self.score}"
