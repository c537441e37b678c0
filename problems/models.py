"""The corpus: problems, reference solutions, candidate proofs and verifier analyses.

Every row has a natural key so that imports are idempotent upserts (docs/ARCHITECTURE.md).
"""

from decimal import Decimal

from django.db import models
from django.db.models import Q

from jobs.models import JobLiveness, JobStatus


class Topic(models.TextChoices):
    ALGEBRA = "A", "Algebra"
    COMBINATORICS = "C", "Combinatorics"
    GEOMETRY = "G", "Geometry"
    NUMBER_THEORY = "N", "Number theory"
    UNKNOWN = "", "Unknown"


class Problem(models.Model):
    external_id = models.CharField(max_length=200, unique=True)
    contest = models.CharField(max_length=100, blank=True, db_index=True)
    year = models.PositiveIntegerField(null=True, blank=True, db_index=True)
    number = models.CharField(max_length=20, blank=True)
    topic = models.CharField(max_length=1, choices=Topic.choices, blank=True, db_index=True)
    statement = models.TextField(help_text="The current statement (version statement_version).")
    statement_version = models.PositiveIntegerField(
        default=1,
        db_default=1,
        help_text="The current statement's version: 1, then one more each time an import "
        "changes it (the earlier ones are ProblemStatement rows).",
    )
    final_answer = models.TextField(blank=True)
    source = models.CharField(max_length=200, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["contest", "year", "number", "external_id"]
        indexes = [models.Index(fields=["contest", "year"], name="problem_contest_year")]

    def __str__(self) -> str:
        return self.external_id


class ProblemStatement(models.Model):
    """A statement a problem had before an import changed it (problems/services/statements.py):
    the proofs that were rated against it point at it (Proof.statement). The current statement
    is the problem's own `statement`, version `statement_version`; statements a source carries
    beside its own (DeepSeekMath-V2's `question_original`) are in the problem's metadata,
    `alternative_statements`."""

    problem = models.ForeignKey(Problem, on_delete=models.CASCADE, related_name="past_statements")
    version = models.PositiveIntegerField()
    text = models.TextField()
    source = models.CharField(max_length=200, blank=True, help_text="The source that set it.")
    replaced_by = models.CharField(
        max_length=200, blank=True, help_text="The source whose import replaced it."
    )
    replaced_at = models.DateTimeField()

    class Meta:
        ordering = ["problem_id", "version"]
        constraints = [
            models.UniqueConstraint(fields=["problem", "version"], name="statement_version_unique")
        ]

    def __str__(self) -> str:
        return f"{self.problem_id}: statement version {self.version}"


class ReferenceSolution(models.Model):
    problem = models.ForeignKey(
        Problem, on_delete=models.CASCADE, related_name="reference_solutions"
    )
    text = models.TextField()
    text_hash = models.CharField(max_length=64)
    source = models.CharField(max_length=200, blank=True)
    cluster_label = models.CharField(max_length=100, blank=True)
    main_steps = models.JSONField(default=list, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["problem_id", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["problem", "text_hash"], name="refsol_problem_text_unique"
            )
        ]

    def __str__(self) -> str:
        return f"{self.problem_id}: reference {self.text_hash[:8]}"


class Proof(models.Model):
    problem = models.ForeignKey(Problem, on_delete=models.CASCADE, related_name="proofs")
    generator = models.CharField(max_length=200, db_index=True)
    sample_key = models.CharField(
        max_length=200,
        help_text="Sample index or the source's own id: with problem and generator, "
        "the natural key.",
    )
    sample_index = models.IntegerField(null=True, blank=True)
    text = models.TextField()
    text_hash = models.CharField(max_length=64)
    statement = models.ForeignKey(
        ProblemStatement,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="proofs",
        help_text="The statement the proof was written for and rated against, once the "
        "problem's statement changed after it; empty: the problem's current statement.",
    )
    source = models.CharField(max_length=200, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["problem_id", "generator", "sample_index", "sample_key"]
        constraints = [
            models.UniqueConstraint(
                fields=["problem", "generator", "sample_key"], name="proof_natural_key"
            )
        ]

    def __str__(self) -> str:
        return f"{self.problem_id} / {self.generator} #{self.sample_key}"

    @property
    def statement_text(self) -> str:
        """The statement this proof is shown, graded and exported with."""
        return self.statement.text if self.statement_id else self.problem.statement

    @property
    def statement_version(self) -> int:
        return self.statement.version if self.statement_id else self.problem.statement_version


# A verdict read from model text has a score exactly when the text kept its output contract
# (llm.scores.boxed_verdict): the check of VerifierAnalysis and adjudication's MetaVerification.
SCORE_IFF_CONTRACT = Q(score__isnull=True, kept_contract=False) | Q(
    score__isnull=False, kept_contract=True
)


class VerifierAnalysis(models.Model):
    SCORES = (Decimal("0"), Decimal("0.5"), Decimal("1"))

    proof = models.ForeignKey(Proof, on_delete=models.CASCADE, related_name="analyses")
    verifier = models.CharField(max_length=200, db_index=True)
    sample_key = models.CharField(max_length=200)
    text = models.TextField()
    text_hash = models.CharField(max_length=64)
    score = models.DecimalField(max_digits=2, decimal_places=1, null=True, blank=True)
    kept_contract = models.BooleanField(default=False)
    score_problem = models.CharField(
        max_length=200, blank=True, help_text="Why no score was extracted, when none was."
    )
    source = models.CharField(max_length=200, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["proof_id", "verifier", "sample_key"]
        verbose_name_plural = "verifier analyses"
        constraints = [
            models.UniqueConstraint(
                fields=["proof", "verifier", "sample_key"], name="analysis_natural_key"
            ),
            models.CheckConstraint(
                condition=Q(score__isnull=True)
                | Q(score__in=[Decimal("0"), Decimal("0.5"), Decimal("1")]),
                name="analysis_score_in_scale",
            ),
            models.CheckConstraint(
                condition=SCORE_IFF_CONTRACT,
                name="analysis_score_iff_contract",
                violation_error_message="An analysis has a score exactly when it kept the "
                "output contract.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.proof} / {self.verifier} #{self.sample_key}"


class ImportJob(JobLiveness):
    """One import from the upload page or the API: the row its page reads for progress."""

    Status = JobStatus  # jobs.models.JobStatus, the one vocabulary of every job kind

    file = models.FileField(upload_to="imports/%Y/%m/")
    original_name = models.CharField(max_length=255)
    format = models.CharField(max_length=30, blank=True)
    dry_run = models.BooleanField(default=False)
    licence = models.CharField(
        max_length=100,
        blank=True,
        help_text="The licence of the whole source, recorded on every record that states none; "
        "blank: the licence of the format's public dataset.",
    )
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.PENDING)
    processed = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(null=True, blank=True)
    counts = models.JSONField(default=dict, blank=True)
    report = models.JSONField(default=list, blank=True)
    formats = models.JSONField(
        default=list, blank=True, help_text="Each source read and its format (detected or chosen)."
    )
    made = models.JSONField(
        default=list, blank=True, help_text="What the import made elsewhere, in words."
    )
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(
        "auth.User", on_delete=models.SET_NULL, null=True, related_name="import_jobs"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"import {self.pk} ({self.original_name})"


class RenderedText(models.Model):
    """A Markdown + TeX text rendered to safe HTML (problems.rendering), stored under the
    renderer's version and the text's SHA-256: rendered once, read by every page that shows the
    text afterwards, in every web process."""

    key = models.CharField(max_length=80, primary_key=True)
    html = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.key


class Picture(models.Model):
    """A picture a source shipped with a problem or a proof (problems.pictures), stored once by
    its content through the storage API (`pictures/<sha256>.<ext>`); texts refer to it as
    `picture:<sha256>`. Only PNG, JPEG, GIF and WebP, told by their first bytes."""

    sha256 = models.CharField(max_length=64, unique=True)
    content_type = models.CharField(max_length=20)
    size = models.PositiveIntegerField()
    file = models.CharField(max_length=200, help_text="The stored file's name (default storage).")
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.file
