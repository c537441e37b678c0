"""The liveness every background job's row carries (jobs.kinds lists the job kinds).

A worker running a job renews `heartbeat_at` every JOB_HEARTBEAT_SECONDS; `attempts` counts the
runs that took the job. The sweep (jobs.services.jobs_sweep, run by celery beat) re-queues a
running job silent for JOB_STALE_SECONDS, or fails it with the reason after JOB_MAX_ATTEMPTS.
"""

from django.db import models
from django.utils import timezone


class JobLiveness(models.Model):
    heartbeat_at = models.DateTimeField(
        null=True,
        blank=True,
        default=timezone.now,
        help_text="Last sign of life of the worker running the job (or when it was queued).",
    )
    attempts = models.PositiveSmallIntegerField(default=0, help_text="Runs that took the job.")

    class Meta:
        abstract = True


class JobStatus(models.TextChoices):
    """The one status vocabulary of every job kind (and of the runs that group jobs)."""

    PENDING = "pending", "Waiting"
    RUNNING = "running", "Running"
    RETRYING = "retrying", "Waiting to retry"
    SUCCEEDED = "succeeded", "Done"
    FAILED = "failed", "Failed"


class SweepTurn(models.Model):
    """When the sweep last ran, one row per sweep: every beat (one per worker machine, or two
    for safety) sends the sweep each period, and the one that moves `swept_at` on runs it, so a
    sweep runs once a period however many beats there are, and on while any of them lives."""

    name = models.CharField(max_length=40, primary_key=True)
    swept_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.name} swept at {self.swept_at:%Y-%m-%d %H:%M:%S}"
