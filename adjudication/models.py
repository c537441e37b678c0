"""Adjudication cases, their event log, and the one final label per item.

Writes go through adjudication.services, reads through adjudication.selectors. Held by the
database: one unresolved case per item, a resolved case names its resolution, one final label
per item (OneToOne), span offsets ordered.
"""

from decimal import Decimal

from django.conf import settings
from django.db import models
from django.db.models import Q

from jobs.models import JobLiveness, JobStatus
from problems.models import SCORE_IFF_CONTRACT
from rubrics.models import TokenSpend, token_spend


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
                condition=~Q(status=CaseStatus.RESOLVED),
                name="case_one_unresolved_per_item",
            ),
            models.CheckConstraint(
                condition=~Q(status=CaseStatus.RESOLVED) | ~Q(resolution=""),
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
    confidence = models.FloatField(
        null=True,
        blank=True,
        help_text="P(the label's class | every judgement of the item) from the campaign's rater "
        "model (RaterModelFit); empty until a fit, and again when the label changes.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["item_id"]
        indexes = [models.Index(fields=["source"], name="final_label_source")]
        constraints = [
            models.CheckConstraint(
                condition=Q(confidence__isnull=True) | Q(confidence__gte=0, confidence__lte=1),
                name="final_label_confidence_unit",
            )
        ]

    def __str__(self) -> str:
        return f"{self.value} ({self.source}) for item {self.item_id}"


# Verifier runs and the automated labelling loop (DeepSeekMath-V2, sections 2.1.2 and 2.3)

TERNARY = [Decimal("0"), Decimal("0.5"), Decimal("1")]


class VerifierRunKind(models.TextChoices):
    VERIFY = "verify", "Verifier: analyses of proofs"
    META = "meta_verify", "Meta-verifier: meta-analyses of analyses"
    DEFECT_SPLIT = "defect_split", "Pre-split of analyses into claimed defects (suggestions)"


class VerifierRun(JobLiveness):
    """A verifier endpoint over a selection of proofs (`samples` analyses per proof), or a
    meta-verifier endpoint over a selection of analyses (`samples` meta-analyses each); the row
    the run page reads for status, progress, failures and tokens."""

    kind = models.CharField(max_length=20, choices=VerifierRunKind.choices)
    endpoint = models.ForeignKey(
        "rubrics.LLMEndpoint", on_delete=models.PROTECT, related_name="verifier_runs"
    )
    samples = models.PositiveSmallIntegerField(default=1)
    target_ids = models.JSONField(
        default=list, help_text="Proof ids (verify) or analysis ids (meta_verify)."
    )
    status = models.CharField(max_length=10, choices=JobStatus.choices, default=JobStatus.PENDING)
    total = models.PositiveIntegerField(default=0)
    done_count = models.PositiveIntegerField(default=0)
    failed_count = models.PositiveIntegerField(default=0)
    failures = models.JSONField(default=list, blank=True)
    prompt_tokens = models.PositiveBigIntegerField(default=0)
    completion_tokens = models.PositiveBigIntegerField(default=0)
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(condition=Q(samples__gte=1), name="verifier_run_samples")
        ]

    def __str__(self) -> str:
        return f"{self.kind} run {self.pk} ({self.status})"

    @property
    def percent(self) -> int:
        return int(100 * (self.done_count + self.failed_count) / self.total) if self.total else 0

    @property
    def spend(self) -> TokenSpend:
        return token_spend((self.endpoint, self.prompt_tokens, self.completion_tokens))


class MetaVerification(models.Model):
    """A meta-verifier's analysis of a verifier analysis, with its 0 / 0.5 / 1 rating."""

    analysis = models.ForeignKey(
        "problems.VerifierAnalysis", on_delete=models.CASCADE, related_name="meta_verifications"
    )
    verifier = models.CharField(max_length=200)
    sample_key = models.CharField(max_length=200)
    text = models.TextField()
    score = models.DecimalField(max_digits=2, decimal_places=1, null=True, blank=True)
    kept_contract = models.BooleanField(default=False)
    score_problem = models.CharField(max_length=200, blank=True)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    run = models.ForeignKey(
        VerifierRun, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["analysis_id", "verifier", "sample_key"]
        constraints = [
            models.UniqueConstraint(
                fields=["analysis", "verifier", "sample_key"], name="meta_verification_key"
            ),
            models.CheckConstraint(
                condition=Q(score__isnull=True) | Q(score__in=TERNARY),
                name="meta_verification_score_ternary",
            ),
            models.CheckConstraint(
                condition=SCORE_IFF_CONTRACT,
                name="meta_verification_score_iff_contract",
                violation_error_message="A meta-verification has a rating exactly when it kept "
                "the output contract.",
            ),
        ]

    def __str__(self) -> str:
        return f"meta-verification {self.sample_key} of analysis {self.analysis_id}"


class LabellingRun(models.Model):
    """The automated labelling loop over a selection of proofs (n analyses per proof, m
    meta-verifications per analysis reporting issues, k agreeing valid analyses to label)."""

    proof_ids = models.JSONField(default=list)
    n = models.PositiveSmallIntegerField(default=4)
    m = models.PositiveSmallIntegerField(default=3)
    k = models.PositiveSmallIntegerField(default=2)
    confirm_at = models.DecimalField(
        max_digits=2,
        decimal_places=1,
        default=Decimal("1"),
        help_text="Meta score that confirms an analysis: 1, or 0.5 to accept half-confirmations.",
    )
    verifier = models.ForeignKey(
        "rubrics.LLMEndpoint", on_delete=models.PROTECT, related_name="labelling_runs"
    )
    meta_verifier = models.ForeignKey(
        "rubrics.LLMEndpoint", on_delete=models.PROTECT, related_name="meta_labelling_runs"
    )
    auto_campaign = models.ForeignKey(
        "annotation.Campaign",
        on_delete=models.PROTECT,
        related_name="+",
        help_text="Holds the automatically labelled items (final labels, source automatic).",
    )
    route_campaign = models.ForeignKey(
        "annotation.Campaign",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        help_text="The human campaign that receives the proofs the loop is unsure about.",
    )
    audit_campaign = models.ForeignKey(
        "annotation.Campaign",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        help_text="The expert campaign holding the audit sample of automatic labels.",
    )
    status = models.CharField(max_length=10, choices=JobStatus.choices, default=JobStatus.PENDING)
    total = models.PositiveIntegerField(default=0)
    labelled_count = models.PositiveIntegerField(default=0)
    routed_count = models.PositiveIntegerField(default=0)
    failed_count = models.PositiveIntegerField(default=0)
    prompt_tokens = models.PositiveBigIntegerField(default=0)
    completion_tokens = models.PositiveBigIntegerField(default=0)
    meta_prompt_tokens = models.PositiveBigIntegerField(
        default=0, help_text="The meta-verifier's share of prompt_tokens."
    )
    meta_completion_tokens = models.PositiveBigIntegerField(
        default=0, help_text="The meta-verifier's share of completion_tokens."
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(n__gte=1) & Q(m__gte=1) & Q(k__gte=1), name="labelling_run_nmk"
            ),
            models.CheckConstraint(
                condition=Q(confirm_at__in=[Decimal("0.5"), Decimal("1")]),
                name="labelling_run_confirm_at",
            ),
        ]

    def __str__(self) -> str:
        return f"labelling run {self.pk} ({self.status})"

    @property
    def finished_count(self) -> int:
        return self.labelled_count + self.routed_count + self.failed_count

    @property
    def percent(self) -> int:
        return int(100 * self.finished_count / self.total) if self.total else 0

    @property
    def spend(self) -> TokenSpend:
        """Tokens and cost of both endpoints, each at its current prices."""
        return token_spend(
            (
                self.verifier,
                self.prompt_tokens - self.meta_prompt_tokens,
                self.completion_tokens - self.meta_completion_tokens,
            ),
            (self.meta_verifier, self.meta_prompt_tokens, self.meta_completion_tokens),
        )


class LoopDecision(models.TextChoices):
    """What the loop decided for a proof whose job succeeded."""

    LABELLED = "labelled", "Labelled automatically"
    ROUTED = "routed", "Routed to experts"


class LabellingOutcome(JobLiveness):
    """What the loop decided for one proof of a run, and why: a job like every other (its state
    the one JobStatus), whose success carries a decision."""

    run = models.ForeignKey(LabellingRun, on_delete=models.CASCADE, related_name="outcomes")
    proof = models.ForeignKey("problems.Proof", on_delete=models.CASCADE, related_name="+")
    status = models.CharField(max_length=10, choices=JobStatus.choices, default=JobStatus.PENDING)
    decision = models.CharField(max_length=10, choices=LoopDecision.choices, blank=True)
    label = models.DecimalField(max_digits=2, decimal_places=1, null=True, blank=True)
    reason = models.TextField(blank=True)
    item = models.ForeignKey(
        "annotation.Item", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    audit_item = models.ForeignKey(
        "annotation.Item", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    details = models.JSONField(
        default=dict, blank=True, help_text="Per analysis: id, score, meta scores, valid."
    )
    prompt_tokens = models.PositiveBigIntegerField(default=0)
    completion_tokens = models.PositiveBigIntegerField(default=0)
    meta_prompt_tokens = models.PositiveBigIntegerField(default=0)
    meta_completion_tokens = models.PositiveBigIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["run_id", "id"]
        constraints = [
            models.UniqueConstraint(fields=["run", "proof"], name="labelling_outcome_unique"),
            models.CheckConstraint(
                condition=Q(status=JobStatus.SUCCEEDED, decision__in=LoopDecision.values)
                | (~Q(status=JobStatus.SUCCEEDED) & Q(decision="")),
                name="labelling_outcome_decided_when_succeeded",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.state} for proof {self.proof_id} in run {self.run_id}"

    @property
    def state(self) -> str:
        """The decision once made, else the job's state (pending, running, retrying, failed)."""
        return self.decision or self.status

    def get_state_display(self) -> str:
        return self.get_decision_display() if self.decision else self.get_status_display()
