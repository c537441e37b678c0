"""Pairwise comparisons of proofs (a campaign of kind `pairwise`): a pair of two proofs of one
problem, and each expert's judgement of it, which is also their lease on the pair.

A pair keeps its proofs in a canonical order (`proof_a` has the smaller id); what the expert saw
on the left is recorded per judgement (`a_on_left`, drawn at random when the pair is leased), and
the choice is stored against the proof keys, never the screen's order. Two judgements that
differ open the pair as a case (`status = disputed`) that an adjudicator settles."""

from django.conf import settings
from django.db import models
from django.db.models import F, Q

from annotation.models.campaigns import Campaign


class PairChoice(models.TextChoices):
    """A preference between the two proofs of a pair, against the pair's own keys."""

    A = "a", "proof_a is better"
    B = "b", "proof_b is better"
    TIE = "tie", "Tie"


class PairStatus(models.TextChoices):
    OPEN = "open", "Needs judgements"
    DISPUTED = "disputed", "Judgements disagree: a case for an adjudicator"
    FINAL = "final", "Final"


class PairLabelSource(models.TextChoices):
    AGREEMENT = "agreement", "The judgements agree"
    SINGLE = "single", "One judgement required"
    ADJUDICATION = "adjudication", "Settled by an adjudicator"


class JudgementStatus(models.TextChoices):
    ACTIVE = "active", "Leased"
    RELEASED = "released", "Released"
    SUBMITTED = "submitted", "Submitted"


class PairItem(models.Model):
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="pair_items")
    proof_a = models.ForeignKey("problems.Proof", on_delete=models.PROTECT, related_name="+")
    proof_b = models.ForeignKey("problems.Proof", on_delete=models.PROTECT, related_name="+")
    required_judgements = models.PositiveSmallIntegerField(default=2)
    submitted_count = models.PositiveSmallIntegerField(default=0)
    status = models.CharField(max_length=10, choices=PairStatus.choices, default=PairStatus.OPEN)
    final_choice = models.CharField(max_length=3, choices=PairChoice.choices, blank=True)
    final_source = models.CharField(max_length=12, choices=PairLabelSource.choices, blank=True)
    settled_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    settled_reason = models.TextField(blank=True)
    settled_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["campaign_id", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["campaign", "proof_a", "proof_b"], name="pair_item_unique"
            ),
            models.CheckConstraint(
                condition=Q(proof_a__lt=F("proof_b")), name="pair_item_canonical_order"
            ),
            models.CheckConstraint(
                condition=Q(required_judgements__gte=1), name="pair_item_required_at_least_1"
            ),
            models.CheckConstraint(
                condition=Q(status="final", final_choice__in=["a", "b", "tie"])
                | (~Q(status="final") & Q(final_choice="")),
                name="pair_item_final_has_choice",
            ),
        ]
        indexes = [models.Index(fields=["campaign", "status"], name="pair_item_queue")]

    def __str__(self) -> str:
        return f"pair {self.pk} ({self.proof_a_id} vs {self.proof_b_id})"

    @property
    def is_final(self) -> bool:
        return self.status == PairStatus.FINAL


class PairJudgement(models.Model):
    """One expert's judgement of a pair; while `active` it is their lease on the pair."""

    pair = models.ForeignKey(PairItem, on_delete=models.CASCADE, related_name="judgements")
    expert = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="pair_judgements"
    )
    status = models.CharField(
        max_length=10, choices=JudgementStatus.choices, default=JudgementStatus.ACTIVE
    )
    leased_until = models.DateTimeField()
    a_on_left = models.BooleanField(
        help_text="The shown order, drawn at random for this judgement: proof_a on the left "
        "(shown as A) when true, proof_b when false."
    )
    choice = models.CharField(max_length=3, choices=PairChoice.choices, blank=True)
    reason = models.TextField(blank=True)
    assigned_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        help_text="The admin who gave the pair to the expert by hand; empty when they pressed next.",
    )
    submitted_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["pair_id", "id"]
        constraints = [
            models.UniqueConstraint(fields=["pair", "expert"], name="pair_judgement_unique"),
            models.CheckConstraint(
                condition=Q(status="submitted", choice__in=["a", "b", "tie"])
                | (~Q(status="submitted") & Q(choice="")),
                name="pair_judgement_submitted_has_choice",
            ),
        ]
        indexes = [models.Index(fields=["expert", "status"], name="pair_judgement_expert")]

    def __str__(self) -> str:
        return f"judgement of pair {self.pair_id} by {self.expert_id} ({self.status})"

    @property
    def is_submitted(self) -> bool:
        return self.status == JudgementStatus.SUBMITTED
