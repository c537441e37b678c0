"""Import jobs: an upload saved on an ImportJob row, run by a Celery task that records
status, progress, counts, the per-line report and any failure on that row."""

from __future__ import annotations

import copy
import time
from pathlib import Path

from django.contrib.auth.models import User
from django.core.files.uploadedfile import UploadedFile
from django.db import connections, transaction
from django.utils import timezone

from problems.models import ImportJob
from problems.services.corpus import ImportReport, corpus_import

PROGRESS_ALIAS = "import_progress"
PROGRESS_EVERY_SECONDS = 0.5


@transaction.atomic
def import_job_create(
    *, upload: UploadedFile, fmt: str = "", dry_run: bool = False, created_by: User | None
) -> ImportJob:
    """Saves the upload on a new job and enqueues `problems.tasks.import_run` after commit."""
    from problems.tasks import import_run

    job = ImportJob(
        original_name=Path(upload.name).name[:255],
        format=fmt,
        dry_run=dry_run,
        total=upload.size,
        created_by=created_by,
    )
    job.file.save(Path(upload.name).name, upload, save=False)
    job.save()
    transaction.on_commit(lambda: import_run.delay(job.pk))
    return job


class _ProgressWriter:
    """Writes progress on a second database connection, so the page sees it while the import's
    own transaction is still open (PostgreSQL only: SQLite has one writer at a time; and only
    when the caller holds no transaction, in which the job row would not be visible)."""

    def __init__(self, job_id: int):
        self.job_id = job_id
        self.last = 0.0
        default = connections["default"]
        self.enabled = default.vendor == "postgresql" and not default.in_atomic_block
        if self.enabled and PROGRESS_ALIAS not in connections.settings:
            connections.settings[PROGRESS_ALIAS] = copy.deepcopy(connections.settings["default"])

    def __call__(self, bytes_read: int, report: ImportReport) -> None:
        now = time.monotonic()
        if not self.enabled or now - self.last < PROGRESS_EVERY_SECONDS:
            return
        self.last = now
        ImportJob.objects.using(PROGRESS_ALIAS).filter(pk=self.job_id).update(
            processed=bytes_read, counts=report.counts
        )

    def close(self) -> None:
        if self.enabled:
            connections[PROGRESS_ALIAS].close()


def import_job_run(*, job_id: int) -> ImportJob | None:
    """Runs a job's import once: a finished job (done or failed) is left as it is."""
    job = ImportJob.objects.filter(pk=job_id).first()
    if job is None or job.status in (ImportJob.Status.SUCCEEDED, ImportJob.Status.FAILED):
        return job
    ImportJob.objects.filter(pk=job_id).update(
        status=ImportJob.Status.RUNNING, started_at=timezone.now(), processed=0
    )
    writer = _ProgressWriter(job_id)
    try:
        report = corpus_import(
            path=Path(job.file.path),
            fmt=job.format or None,
            dry_run=job.dry_run,
            name=job.original_name,
            on_progress=writer,
        )
    finally:
        writer.close()
    status = ImportJob.Status.SUCCEEDED if report.ok else ImportJob.Status.FAILED
    message = "" if report.ok else f"{report.errors} error(s): nothing was written."
    ImportJob.objects.filter(pk=job_id).update(
        status=status,
        processed=job.total or 0,
        counts=report.counts,
        report=report.to_dict()["issues"],
        error=message,
        finished_at=timezone.now(),
    )
    return ImportJob.objects.get(pk=job_id)


def import_job_fail(*, job_id: int, message: str) -> None:
    """Records a failure the import itself could not report (e.g. the database went away)."""
    ImportJob.objects.filter(pk=job_id).update(
        status=ImportJob.Status.FAILED, error=message[:2000], finished_at=timezone.now()
    )
