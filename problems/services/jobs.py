"""Import jobs: an upload saved on an ImportJob row, run by a Celery task that records
status, progress, counts, the per-line report and any failure on that row.

Retention: the upload is removed when its job ends (succeeded or failed: a finished job is
never run again); while the task retries (the database went away) it is kept, up to
PROOFMARK_IMPORT_UPLOAD_DAYS days, after which the next job to run removes it."""

from __future__ import annotations

import time
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.contrib.auth.models import User
from django.core.files.uploadedfile import UploadedFile
from django.db import connections, transaction
from django.utils import timezone

from core.broker import broker_require
from core.files import stored_file_local
from core.sql import Table
from jobs.services import job_send_on_commit
from problems.models import ImportJob
from problems.progress import import_progress_remove, import_progress_write
from problems.services.corpus import ImportReport, corpus_import

PROGRESS_EVERY_SECONDS = 0.5


@transaction.atomic
def import_job_create(
    *,
    upload: UploadedFile,
    fmt: str = "",
    dry_run: bool = False,
    licence: str = "",
    created_by: User | None,
) -> ImportJob:
    """Saves the upload on a new job and sends its job (`problems.tasks.import_run`) after commit.
    `licence` is the licence of the whole source (blank: the format's default)."""
    broker_require()  # 503 and nothing saved while the job queue is away
    job = ImportJob(
        original_name=Path(upload.name).name[:255],
        format=fmt,
        dry_run=dry_run,
        licence=licence.strip(),
        total=upload.size,
        created_by=created_by,
    )
    job.file.save(Path(upload.name).name, upload, save=False)
    job.save()
    job_send_on_commit("import", [job.pk])
    return job


def _upload_remove(job: ImportJob) -> None:
    if job.file:
        job.file.delete(save=False)
    ImportJob.objects.filter(pk=job.pk).update(file="")


def import_uploads_prune() -> int:
    """Removes the uploads kept longer than PROOFMARK_IMPORT_UPLOAD_DAYS; how many."""
    cutoff = timezone.now() - timedelta(days=settings.PROOFMARK_IMPORT_UPLOAD_DAYS)
    old = list(ImportJob.objects.filter(created_at__lt=cutoff).exclude(file="").only("file"))
    for job in old:
        _upload_remove(job)
    return len(old)


class _ProgressWriter:
    """Writes progress where the page sees it while the import's transaction is still open: on a
    connection of its own (autocommit), or, when the caller already holds a transaction (a
    command run inside one), in the run folder's progress file (problems.progress)."""

    def __init__(self, job_id: int, total: int):
        self.job_id = job_id
        self.total = total
        self.last = 0.0
        self.connection = None
        default = connections["default"]
        if not default.in_atomic_block:
            import psycopg

            params = default.get_connection_params()
            params.pop("cursor_factory", None)
            params.pop("context", None)
            self.connection = psycopg.connect(**params, autocommit=True)

    def __call__(self, bytes_read: int, report: ImportReport) -> None:
        now = time.monotonic()
        if now - self.last < PROGRESS_EVERY_SECONDS:
            return
        self.last = now
        if self.connection is None:
            import_progress_write(
                job_id=self.job_id, processed=min(bytes_read, self.total), counts=report.counts
            )
            return
        from psycopg.types.json import Jsonb

        job = Table(ImportJob)
        self.connection.execute(
            f"UPDATE {job} SET {job.processed} = %s, {job.counts} = %s WHERE {job.id} = %s",
            [min(bytes_read, self.total), Jsonb(report.counts), self.job_id],
        )

    def close(self) -> None:
        import_progress_remove(job_id=self.job_id)
        if self.connection is not None:
            self.connection.close()


def import_job_run(*, job_id: int) -> ImportJob | None:
    """Runs a job's import once: a finished job (done or failed) is left as it is."""
    import_uploads_prune()
    job = ImportJob.objects.filter(pk=job_id).first()
    if job is None or job.status in (ImportJob.Status.SUCCEEDED, ImportJob.Status.FAILED):
        return job
    if not job.file:
        days = settings.PROOFMARK_IMPORT_UPLOAD_DAYS
        import_job_fail(job_id=job_id, message=f"The upload was removed after {days} days.")
        return ImportJob.objects.get(pk=job_id)
    ImportJob.objects.filter(pk=job_id).update(
        status=ImportJob.Status.RUNNING,
        started_at=timezone.now(),
        processed=0,
    )
    writer = _ProgressWriter(job_id, job.total or 0)
    try:
        with stored_file_local(job.file.name, storage=job.file.storage) as path:
            report = corpus_import(
                path=path,
                fmt=job.format or None,
                dry_run=job.dry_run,
                name=job.original_name,
                on_progress=writer,
                licence=job.licence,
            )
    finally:
        writer.close()
    status = ImportJob.Status.FAILED if report.failed else ImportJob.Status.SUCCEEDED
    message = report.outcome() if report.errors else ""
    ImportJob.objects.filter(pk=job_id).update(
        status=status,
        processed=job.total or 0,
        counts=report.counts,
        report=report.to_dict()["issues"],
        formats=report.formats,
        made=([f"{report.pictures} picture(s) stored"] if report.pictures else [])
        + report.after_commit,
        error=message,
        finished_at=timezone.now(),
    )
    _upload_remove(job)
    return ImportJob.objects.get(pk=job_id)


def import_job_fail(*, job_id: int, message: str) -> None:
    """Records a failure the import itself could not report (e.g. the database went away)."""
    ImportJob.objects.filter(pk=job_id).update(
        status=ImportJob.Status.FAILED, error=message[:2000], finished_at=timezone.now()
    )
    job = ImportJob.objects.filter(pk=job_id).only("file").first()
    if job is not None:
        _upload_remove(job)
