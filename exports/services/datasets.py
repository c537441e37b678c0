"""Writing a dataset (data file, manifest, card) and the export jobs that do it in the background."""

from __future__ import annotations

import logging
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import F
from django.db.models.functions import Coalesce
from django.utils import timezone

from annotation.models import Campaign
from config.roles import Role, has_role
from exports.formats import ExportError, ExportOptions, plan_for
from exports.models import ExportJob, FileType, JobStatus
from exports.writers import (
    FILE_TYPES,
    SCHEMA_VERSION,
    manifest_bytes,
    render_card,
    write_rows,
    write_text_atomic,
)

logger = logging.getLogger(__name__)
PROGRESS_SAVE_EVERY = 2000


def companion_paths(data_path: Path) -> tuple[Path, Path]:
    """The manifest and the dataset card that go beside a data file."""
    stem = data_path.name.rsplit(".", 1)[0]
    return (
        data_path.with_name(f"{stem}.manifest.json"),
        data_path.with_name(f"{stem}.README.md"),
    )


def dataset_write(
    *,
    campaign: Campaign,
    fmt: str,
    file_type: str,
    options: ExportOptions,
    out: Path,
    on_total: Callable[[int], None] | None = None,
    on_progress: Callable[[int], None] | None = None,
) -> dict:
    """Streams one campaign's dataset into `out`, then writes its card and manifest beside it.

    Every file appears under its final name only when complete. Returns the manifest.
    """
    if file_type not in FILE_TYPES:
        raise ExportError(f"unknown file type {file_type!r}: choose one of {', '.join(FILE_TYPES)}")
    plan = plan_for(fmt, campaign, options)
    if on_total:
        on_total(plan.total)
    sample: list[dict] = []
    licences: set[str] = set()

    def rows():
        for row in plan.rows():
            if not sample:
                sample.append(row)
            if row.get("licence"):
                licences.add(row["licence"])
            yield row

    data = write_rows(
        rows=rows(), fields=plan.fields, file_type=file_type, path=out, on_progress=on_progress
    )
    manifest_path, card_path = companion_paths(out)
    manifest = {
        "schema_version": SCHEMA_VERSION,
        "format": fmt,
        "file_type": file_type,
        "campaign": campaign.slug,
        "scale": campaign.scale,
        "task_kind": campaign.task_kind,
        "created_at": timezone.now().isoformat(),
        "filters": options.to_dict(),
        "counts": {"rows": data.rows, "rows_before_split_filter": plan.total},
        "conversions": plan.conversions,
        "split": (
            {
                "test_fraction": options.test_fraction,
                "seed": options.split_seed,
                "exported": options.split or "train and test",
            }
            if options.test_fraction is not None
            else None
        ),
        "licences": sorted(licences),
        "columns": [
            {"name": f.name, "type": f.kind, "description": f.description} for f in plan.fields
        ],
        "files": {out.name: {"rows": data.rows, "size": data.size, "sha256": data.sha256}},
    }
    title = f"{campaign.name}: {fmt} dataset"
    card = render_card(
        title=title,
        summary=plan.summary,
        fields=plan.fields,
        manifest=manifest,
        sample=_shorten(sample[0]) if sample else None,
    )
    card_result = write_text_atomic(card_path, card)
    manifest["files"][card_path.name] = {
        "rows": 0,
        "size": card_result.size,
        "sha256": card_result.sha256,
    }
    with_manifest = manifest_bytes(manifest)
    write_text_atomic(manifest_path, with_manifest.decode("utf-8"))
    return manifest


def _shorten(row: dict, limit: int = 160) -> dict:
    """A sample record for the card, long texts cut."""
    return {
        key: (value[:limit] + "…" if isinstance(value, str) and len(value) > limit else value)
        for key, value in row.items()
    }


# --- Jobs ------------------------------------------------------------------------------------


def export_dir() -> Path:
    return Path(settings.MEDIA_ROOT) / "exports"


@transaction.atomic
def export_create(
    *, user: AbstractBaseUser, campaign: Campaign, fmt: str, file_type: str, filters: dict
) -> ExportJob:
    """Checks the request, records the job and queues it once the row is committed."""
    options = ExportOptions.from_dict(filters)
    if file_type not in FileType.values:
        raise ExportError(f"unknown file type {file_type!r}: choose one of {', '.join(FILE_TYPES)}")
    if options.expert_names and not has_role(user, Role.ADMIN):
        raise ExportError("only an admin may export experts' names instead of pseudonyms")
    if has_role(user, Role.EXPERT) and not has_role(user, Role.ADMIN):
        # an expert who also researches sees no judgement of an item still being graded
        options = replace(options, final_only=True)
    plan_for(fmt, campaign, options)  # raises ExportError when the format does not fit
    job = ExportJob.objects.create(
        campaign=campaign,
        format=fmt,
        file_type=file_type,
        filters=options.to_dict(),
        created_by=user,
    )
    from exports.tasks import export_run_task

    transaction.on_commit(lambda: export_run_task.delay(job.pk))
    return job


STALE_AFTER = timedelta(minutes=10)  # a running job silent this long has lost its worker
MAX_ATTEMPTS = 3


@transaction.atomic
def _export_take(job_id: int) -> ExportJob | None:
    """Takes the job for this run (None if it is done or its worker is alive)."""
    job = (
        ExportJob.objects.select_for_update(of=("self",)).select_related("campaign").get(pk=job_id)
    )
    now = timezone.now()
    alive = (
        job.status == JobStatus.RUNNING
        and job.heartbeat_at
        and job.heartbeat_at >= now - STALE_AFTER
    )
    if job.status == JobStatus.SUCCEEDED or alive:
        return None
    job.status = JobStatus.RUNNING
    job.started_at = job.heartbeat_at = now
    job.processed = 0
    job.error = ""
    job.attempts += 1
    job.save(
        update_fields=["status", "started_at", "heartbeat_at", "processed", "error", "attempts"]
    )
    return job


class _Superseded(Exception):
    """Another run took the job over (this one was presumed dead): stop, touch nothing."""


def export_run(*, job_id: int) -> ExportJob:
    """Builds the job's files. Idempotent: a finished job is left alone, and so is a job whose
    worker is alive (fresh heartbeat); a job found running with a stale heartbeat (its worker
    died) starts again from nothing, its partial files never having been renamed. Each run takes
    the job by incrementing `attempts` and writes to the row only while that count is its own."""
    job = _export_take(job_id)
    if job is None:
        return ExportJob.objects.get(pk=job_id)
    own = ExportJob.objects.filter(pk=job.pk, attempts=job.attempts)
    relative = Path("exports") / str(job.pk) / f"{job.campaign.slug}-{job.format}.{job.file_type}"
    out = Path(settings.MEDIA_ROOT) / relative

    def on_total(total: int) -> None:
        if not own.update(total=total, heartbeat_at=timezone.now()):
            raise _Superseded

    def on_progress(count: int) -> None:
        saved = count % PROGRESS_SAVE_EVERY != 0 or own.update(
            processed=count, heartbeat_at=timezone.now()
        )
        if not saved:
            raise _Superseded

    try:
        manifest = dataset_write(
            campaign=job.campaign,
            fmt=job.format,
            file_type=job.file_type,
            options=ExportOptions.from_dict(job.filters),
            out=out,
            on_total=on_total,
            on_progress=on_progress,
        )
    except _Superseded:
        logger.warning("export %s: taken over by a later run, this one stops", job.pk)
        return ExportJob.objects.get(pk=job.pk)
    except Exception as exc:
        logger.exception("export %s failed", job.pk)
        own.update(
            status=JobStatus.FAILED,
            error=f"{type(exc).__name__}: {exc}",
            finished_at=timezone.now(),
        )
        return ExportJob.objects.get(pk=job.pk)
    info = manifest["files"][out.name]
    own.update(
        status=JobStatus.SUCCEEDED,
        processed=info["rows"],
        file=str(relative),
        size=info["size"],
        sha256=info["sha256"],
        manifest=manifest,
        finished_at=timezone.now(),
    )
    return ExportJob.objects.get(pk=job.pk)


@dataclass
class Sweep:
    requeued: list[int] = field(default_factory=list)
    failed: list[int] = field(default_factory=list)


def export_jobs_requeue_stale(
    *, stale_after: timedelta = STALE_AFTER, max_attempts: int = MAX_ATTEMPTS
) -> Sweep:
    """Restarts the export jobs whose worker died. Idempotent, cheap enough to run on every
    exports page load, and safe when two sweeps meet (each job is changed only if still as
    found, and queued by the sweep that changed it).

    A job running without a heartbeat for `stale_after` is queued again, its partial files
    removed; after `max_attempts` runs it is marked failed with the reason instead, and every
    file it left is removed, so that nothing under its name looks complete. A job still waiting
    after `stale_after` (its queue message lost) is queued again.
    """
    now = timezone.now()
    cutoff = now - stale_after
    sweep = Sweep()
    stale = (
        ExportJob.objects.filter(status__in=(JobStatus.PENDING, JobStatus.RUNNING))
        .alias(beat=Coalesce("heartbeat_at", "started_at", "created_at"))
        .filter(beat__lt=cutoff)
    )
    found = stale.annotate(last=F("beat")).values_list("pk", "status", "attempts", "last")
    for pk, status, attempts, beat in found:
        same = stale.filter(pk=pk, status=status, attempts=attempts)
        silent = f"its worker stopped (no sign of it since {beat:%Y-%m-%d %H:%M} UTC)"
        if status == JobStatus.RUNNING and attempts >= max_attempts:
            if same.update(
                status=JobStatus.FAILED,
                error=f"{silent}, {attempts} times",
                finished_at=now,
            ):
                shutil.rmtree(export_dir() / str(pk), ignore_errors=True)
                sweep.failed.append(pk)
            continue
        note = {"error": f"Queued again: {silent}"} if status == JobStatus.RUNNING else {}
        if same.update(status=JobStatus.PENDING, heartbeat_at=now, processed=0, **note):
            for partial in (export_dir() / str(pk)).glob(".*.partial-*"):
                partial.unlink(missing_ok=True)
            sweep.requeued.append(pk)
    if sweep.requeued:
        from exports.tasks import export_run_task

        ids = list(sweep.requeued)
        transaction.on_commit(lambda: [export_run_task.delay(pk) for pk in ids])
    return sweep


def export_file_path(job: ExportJob, part: str) -> Path:
    """The data file, or its `manifest` or `card`; ExportError while the job is not done."""
    if job.status != JobStatus.SUCCEEDED or not job.file:
        raise ExportError("this export has no file yet")
    data = Path(settings.MEDIA_ROOT) / job.file
    manifest, card = companion_paths(data)
    return {"data": data, "manifest": manifest, "card": card}[part]
