"""Dataset exports: one row per export job.

Writes go through exports.services; reads through exports.selectors.
"""

from django.conf import settings
from django.db import models
from django.db.models import Q

from jobs.models import JobLiveness, JobStatus


class ExportFormat(models.TextChoices):
    PROOFBENCH = "proofbench", "ProofBench (0-7 expert rating per proof)"
    DV = "dv", "D_v (problem, proof, score in 0 / 0.5 / 1)"
    DMV = "dmv", "D_mv (problem, proof, analysis, meta score in 0 / 0.5 / 1)"
    ANNOTATIONS = "annotations", "Annotations (every judgement, for audits)"
    JUDGEMENTS = "judgements", "Judgements (long format: every expert and model judgement)"
    PAIRS = "pairs", "Pairs (every judgement of two proofs of a problem, pairwise campaigns)"


class FileType(models.TextChoices):
    JSONL = "jsonl", "JSON Lines"
    CSV = "csv", "CSV"
    PARQUET = "parquet", "Parquet"


class Layout(models.TextChoices):
    FILE = "file", "One data file, with its manifest and card beside it"
    HF = "hf", "Also a Hugging Face dataset folder (.zip: data by split, card with its YAML header)"


class ExportJob(JobLiveness):
    """One export: the row its page polls for progress and the download reads.

    `file` names the data file only once it is complete (written under a temporary name and
    renamed); the manifest and the dataset card sit beside it. A running job's worker renews
    `heartbeat_at` as it goes; `attempts` counts the runs that took the job, and only the latest
    may write to the row (jobs.services.jobs_sweep restarts a job whose worker died).
    """

    campaign = models.ForeignKey(
        "annotation.Campaign", on_delete=models.CASCADE, related_name="export_jobs"
    )
    format = models.CharField(max_length=20, choices=ExportFormat.choices)
    file_type = models.CharField(max_length=10, choices=FileType.choices)
    layout = models.CharField(max_length=10, choices=Layout.choices, default=Layout.FILE)
    filters = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=12, choices=JobStatus.choices, default=JobStatus.PENDING)
    processed = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(null=True, blank=True)
    file = models.CharField(
        max_length=500, blank=True, help_text="Data file, relative to MEDIA_ROOT."
    )
    size = models.PositiveBigIntegerField(null=True, blank=True)
    sha256 = models.CharField(max_length=64, blank=True)
    manifest = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="export_jobs"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=~Q(status=JobStatus.SUCCEEDED) | ~Q(file=""), name="export_done_has_file"
            )
        ]

    def __str__(self) -> str:
        return f"export {self.pk} ({self.format}, {self.file_type})"

    @property
    def is_active(self) -> bool:
        return self.status in (JobStatus.PENDING, JobStatus.RUNNING)

    @property
    def active_filters(self) -> dict:
        """The filters that narrow the export (empty values and the cut points left out)."""
        return {
            k: v
            for k, v in self.filters.items()
            if v not in (None, "", [], False, 0) and k not in ("cuts", "split_seed")
        }

    @property
    def percent(self) -> int:
        if self.status == JobStatus.SUCCEEDED:
            return 100
        if not self.total:
            return 0
        return min(100, int(100 * self.processed / self.total))
