"""An AI second opinion, revealed only after the expert commits (issue #17): what the expert
was shown after submitting, and what they did with it."""

from django.db import models
from django.db.models import Q

from annotation.models.campaigns import SecondOpinionSource
from annotation.models.grading import Grade


class SecondOpinion(models.Model):
    """What an expert was shown after submitting a grade in a campaign with a second opinion,
    and what they did with it: the score they committed before the reveal, the automatic score
    and analyses revealed (a copy: what the expert saw, whatever happens to the runs later),
    and the one revision the reveal allows, with its reason. The revised score is also the
    grade's score (the expert's judgement that labels and adjudication read); `score_before`
    keeps the committed one. `score` is None when no automatic opinion of the proof existed:
    the page said so and offered no revision."""

    grade = models.OneToOneField(Grade, on_delete=models.CASCADE, related_name="second_opinion")
    source = models.CharField(max_length=10, choices=SecondOpinionSource.choices)
    score = models.DecimalField(
        max_digits=6, decimal_places=3, null=True, blank=True, help_text="On `scale`."
    )
    scale = models.CharField(max_length=10, blank=True, help_text="The automatic score's scale.")
    origin = models.CharField(max_length=300, blank=True, help_text="Where it came from, in words.")
    analyses = models.JSONField(
        default=list, blank=True, help_text="What was shown: [{title, score, text}]."
    )
    revealed_at = models.DateTimeField()
    score_before = models.DecimalField(max_digits=4, decimal_places=2)
    score_after = models.DecimalField(max_digits=4, decimal_places=2, null=True, blank=True)
    reason = models.TextField(blank=True)
    revised_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["grade_id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(score_after__isnull=True) | (~Q(reason="") & Q(score__isnull=False)),
                name="second_opinion_revision_has_reason",
            ),
            models.CheckConstraint(
                condition=(Q(score_after__isnull=True) & Q(revised_at__isnull=True))
                | (Q(score_after__isnull=False) & Q(revised_at__isnull=False)),
                name="second_opinion_revised_at",
            ),
        ]

    def __str__(self) -> str:
        return f"second opinion for grade {self.grade_id}"

    @property
    def available(self) -> bool:
        return self.score is not None

    @property
    def revised(self) -> bool:
        return self.score_after is not None
