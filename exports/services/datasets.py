"""Writing a dataset (data file, manifest, card) and the export jobs that do it in the background."""

from __future__ import annotations

import io
import logging
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path, PurePath, PurePosixPath
from typing import IO

from django.contrib.auth.models import AbstractBaseUser
from django.core.files.storage import default_storage
from django.db import transaction
from django.utils import timezone

from annotation.models import Campaign, Item, TaskKind
from annotation.scales import conversions as scale_conversions
from core.broker import broker_require
from core.files import stored_file_put, stored_folder_delete
from core.roles import Role, has_role
from core.signals import send_on_commit
from core.values import csv_safe
from core.visibility import ensure_not_blind
from exports.formats import ExportError, ExportOptions, plan_for
from exports.models import ExportJob, FileType, JobStatus, Layout
from exports.services.hub import HF_FILE_TYPES, hub_folder_write, hub_folder_zip
from exports.signals import export_finished
from exports.writers import (
    FILE_TYPES,
    SCHEMA_VERSION,
    manifest_bytes,
    render_card,
    write_rows,
    write_text_atomic,
)
from jobs.services import job_send_on_commit
from problems.models import Picture
from problems.pictures import REFERENCE, STORED, stored_in

logger = logging.getLogger(__name__)
PROGRESS_SAVE_EVERY = 2000


def companion_paths(data_path: PurePath) -> tuple[PurePath, PurePath]:
    """The manifest and the dataset card that go beside a data file, named after the whole file
    name (`x.csv.manifest.json`): the JSONL, CSV and Parquet files of one stem each keep their own."""
    return (
        data_path.with_name(f"{data_path.name}.manifest.json"),
        data_path.with_name(f"{data_path.name}.README.md"),
    )


def checkpoints_path(data_path: PurePath) -> PurePath:
    """The checkpoint figures that go beside a data file (`x.jsonl.checkpoints.csv`), written
    when the campaign's grades used a marking scheme's checklist."""
    return data_path.with_name(f"{data_path.name}.checkpoints.csv")


def export_paths(data_path: PurePath) -> tuple[PurePath, ...]:
    """Every file an export may write: the data, its manifest and card, and its checkpoints."""
    return (data_path, *companion_paths(data_path), checkpoints_path(data_path))


def hf_zip_path(data_path: PurePath) -> PurePath:
    """The Hugging Face dataset folder of an export with layout `hf`, as one .zip beside its
    data file (`x.parquet.hf.zip`): the download part `hf`."""
    return data_path.with_name(f"{data_path.name}.hf.zip")


def layout_check(*, layout: str, file_type: str) -> None:
    """ExportError unless the layout is known and takes the file type."""
    if layout not in Layout.values:
        raise ExportError(f"layout {layout!r}: choose one of {', '.join(Layout.values)}")
    if layout == Layout.HF and file_type not in HF_FILE_TYPES:
        raise ExportError(
            f"layout hf: file type {' or '.join(HF_FILE_TYPES)} (a Hugging Face dataset folder "
            f"holds no {file_type})"
        )


def checkpoints_write(*, campaign: Campaign, path: Path) -> dict | None:
    """Writes the campaign's checkpoint figures (adjudication.checkpoints: agreement on each
    checkpoint's award and its discrimination, with intervals; the same rows as the checkpoints
    page's CSV) to `path`, and returns its manifest entry; None (and no file) when no grade used
    a scheme's checklist."""
    import csv

    from adjudication.checkpoints import (
        CSV_COLUMNS,
        campaign_checkpoint_figures_cached,
        checklist_grades,
        checkpoint_csv_rows,
    )

    if not checklist_grades(campaign).exists():  # one query, and none of the figures' work
        return None
    rows = checkpoint_csv_rows(campaign_checkpoint_figures_cached(campaign))
    if not rows:
        return None
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow([name for name, _ in CSV_COLUMNS])
    writer.writerows([csv_safe(c) if isinstance(c, str) else c for c in row] for row in rows)
    result = write_text_atomic(path, text.getvalue())
    return {"rows": len(rows), "size": result.size, "sha256": result.sha256}


def dataset_write(
    *,
    campaign: Campaign,
    fmt: str,
    file_type: str,
    options: ExportOptions,
    out: Path,
    on_total: Callable[[int], None] | None = None,
    on_progress: Callable[[int], None] | None = None,
    hf_folder: Path | None = None,
) -> dict:
    """Streams one campaign's dataset into `out`, then writes its card and manifest beside it;
    with `hf_folder`, also the same dataset as a Hugging Face dataset folder there
    (exports.services.hub).

    Every file appears under its final name only when complete. Returns the manifest.
    """
    if file_type not in FILE_TYPES:
        raise ExportError(f"unknown file type {file_type!r}: choose one of {', '.join(FILE_TYPES)}")
    if hf_folder is not None:
        layout_check(layout=Layout.HF, file_type=file_type)
    plan = plan_for(fmt, campaign, options)
    if on_total:
        on_total(plan.total)  # counted once (Plan.total), before the rows are read
    sample: list[dict] = []
    licences: set[str] = set()
    pictures = PictureFiles()

    def rows():
        for row in plan.rows():
            row = pictures.rewrite(row)
            if not sample:
                sample.append(row)
            if row.get("licence"):
                licences.add(row["licence"])
            yield row

    data = write_rows(
        rows=rows(), fields=plan.fields, file_type=file_type, path=out, on_progress=on_progress
    )
    picture_files = pictures.write_beside(out)
    manifest_path, card_path = companion_paths(out)
    manifest = {
        "schema_version": SCHEMA_VERSION,
        "format": fmt,
        "file_type": file_type,
        "campaign": campaign.slug,
        "scale": campaign.scale,
        # the campaign scale's maps onto 0-7 and onto 0 / 0.5 / 1 (with the export's cut
        # points), whether or not this format applies them: `conversions` lists those it did
        "scale_maps": scale_conversions(campaign.scale, options.cuts),
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
        "files": {
            out.name: {"rows": data.rows, "size": data.size, "sha256": data.sha256},
            **picture_files,
        },
    }
    manifest["label_confidence"] = label_confidence_manifest(campaign)
    checkpoints = checkpoints_path(out)
    found = checkpoints_write(campaign=campaign, path=checkpoints)
    manifest["checkpoints"] = None if found is None else {"file": checkpoints.name, **found}
    if found is not None:
        manifest["files"][checkpoints.name] = found
    if picture_files:  # files beside the data, which its texts refer to
        manifest["pictures"] = {"folder": PICTURE_FOLDER, "count": len(picture_files)}
    title = f"{campaign.name}: {fmt} dataset"

    def card_of(described: dict) -> str:
        return render_card(
            title=title,
            summary=plan.summary,
            fields=plan.fields,
            manifest=described,
            sample=_shorten(sample[0]) if sample else None,
        )

    card = card_of(manifest)
    card_result = write_text_atomic(card_path, card)
    manifest["files"][card_path.name] = {
        "rows": 0,
        "size": card_result.size,
        "sha256": card_result.sha256,
    }
    if hf_folder is not None:
        manifest["hf"] = hub_folder_write(
            data=out,
            file_type=file_type,
            fields=plan.fields,
            manifest=manifest,
            render_card=card_of,
            title=title,
            folder=hf_folder,
        )
    with_manifest = manifest_bytes(manifest)
    write_text_atomic(manifest_path, with_manifest.decode("utf-8"))
    return manifest


def label_confidence_manifest(campaign: Campaign) -> dict | None:
    """What the rows' `label_confidence` rests on: the fit (model, when), the calibration
    measured on its held-out cases and whether that backs the confidences (`checked`; when not,
    the `caveat` the card states). None before any fit."""
    from estimation.models import RaterModelFit
    from estimation.selectors import confidence_standing

    fit = RaterModelFit.objects.filter(campaign=campaign).first()
    if fit is None:
        return None
    calibration = fit.calibration or {}
    checked, caveat = confidence_standing(calibration)
    return {
        "model": fit.model,
        "fitted_at": fit.fitted_at.isoformat(),
        "temperature": fit.temperature,
        "heldout_cases": calibration.get("cases", 0),
        "ece": calibration.get("ece"),
        "ece_interval": (
            [calibration.get("ece_low"), calibration.get("ece_high")]
            if calibration.get("ece") is not None
            else None
        ),
        "checked": checked,
        "caveat": caveat,
    }


PICTURE_FOLDER = "pictures"


class PictureFiles:
    """The stored pictures an export's texts refer to (`picture:<sha256>`, problems.pictures):
    each reference rewritten to the file written beside the data (`pictures/<sha256>.<ext>`),
    which an import of the folder or its .zip reads back to the same picture."""

    def __init__(self) -> None:
        self.found: dict[str, Picture | None] = {}

    def rewrite(self, row: dict) -> dict:
        changed = None
        for key, value in row.items():
            if not isinstance(value, str) or REFERENCE not in value:
                continue
            wanted = [sha for sha in stored_in(value) if sha not in self.found]
            if wanted:
                known = {p.sha256: p for p in Picture.objects.filter(sha256__in=wanted)}
                self.found.update({sha: known.get(sha) for sha in wanted})
            changed = changed or dict(row)
            changed[key] = STORED.sub(self._file_of, value)
        return changed or row

    def _file_of(self, match) -> str:
        picture = self.found.get(match.group(1))
        if picture is None:
            return match.group(0)
        return f"{PICTURE_FOLDER}/{PurePosixPath(picture.file).name}"

    def write_beside(self, out: Path) -> dict[str, dict]:
        """Copies the pictures into `pictures/` beside `out`; their manifest entries."""
        entries = {}
        for picture in self.found.values():
            if picture is None:
                continue
            name = f"{PICTURE_FOLDER}/{PurePosixPath(picture.file).name}"
            target = out.parent / name
            target.parent.mkdir(exist_ok=True)
            with default_storage.open(picture.file, "rb") as handle:
                data = handle.read()
            target.write_bytes(data)
            entries[name] = {"rows": 0, "size": len(data), "sha256": picture.sha256}
        return entries


def _shorten(row: dict, limit: int = 160) -> dict:
    """A sample record for the card, long texts cut."""
    return {
        key: (value[:limit] + "…" if isinstance(value, str) and len(value) > limit else value)
        for key, value in row.items()
    }


def confidence_refresh(*, campaign_id: int) -> bool:
    """Refits the campaign's rater model first when its fit is stale, so that every exported
    label carries its current confidence (estimation.services.refit.rater_model_refresh; run by
    the export job and the command, never by a page). A fit that fails leaves the export to go
    on with the confidences stored (logged). Returns whether it refitted."""
    from estimation.services.refit import rater_model_refresh

    try:
        return rater_model_refresh(campaign_id=campaign_id)
    except Exception:
        logger.exception("campaign %s: the rater model could not be refitted", campaign_id)
        return False


# --- Jobs ------------------------------------------------------------------------------------


@transaction.atomic
def export_create(
    *,
    user: AbstractBaseUser,
    campaign: Campaign,
    fmt: str,
    file_type: str,
    filters: dict,
    layout: str = Layout.FILE,
) -> ExportJob:
    """Checks the request, records the job and queues it once the row is committed."""
    options = ExportOptions.from_dict(filters)
    if file_type not in FileType.values:
        raise ExportError(f"unknown file type {file_type!r}: choose one of {', '.join(FILE_TYPES)}")
    layout_check(layout=layout, file_type=file_type)
    if options.expert_names and not has_role(user, Role.ADMIN):
        raise ExportError("only an admin may export experts' names instead of pseudonyms")
    # an export shows its proofs' models, analyses and labels: refused to a user holding one
    # of them blind, with the reason (core.visibility)
    ensure_not_blind(user, Item.objects.filter(campaign=campaign), "this campaign's export")
    if campaign.task_kind == TaskKind.PAIRWISE:
        # imported here: the selectors package costs `export_dataset` 15-20 ms of start-up
        from annotation.selectors.pairs import pair_proofs

        ensure_not_blind(user, pair_proofs(campaign), "this campaign's export", proof="pk")
    if has_role(user, Role.EXPERT) and not has_role(user, Role.ADMIN):
        # an expert who also researches sees no judgement of an item still being graded
        options = replace(options, final_only=True)
    plan_for(fmt, campaign, options)  # raises ExportError when the format does not fit
    job = ExportJob.objects.create(
        campaign=campaign,
        format=fmt,
        file_type=file_type,
        layout=layout,
        filters=options.to_dict(),
        created_by=user,
    )
    broker_require()  # 503 and nothing saved while the job queue is away
    job_send_on_commit("export", [job.pk])
    return job


@transaction.atomic
def _export_take(job_id: int) -> ExportJob | None:
    """Takes the job for this run (None if it is done); jobs.services.job_run has checked that
    no live worker holds it."""
    job = (
        ExportJob.objects.select_for_update(of=("self",)).select_related("campaign").get(pk=job_id)
    )
    if job.status == JobStatus.SUCCEEDED:
        return None
    now = timezone.now()
    job.status = JobStatus.RUNNING
    job.started_at = job.heartbeat_at = now
    job.processed = 0
    job.error = ""
    job.save(update_fields=["status", "started_at", "heartbeat_at", "processed", "error"])
    return job


class _Superseded(Exception):
    """Another run took the job over (this one was presumed dead): stop, touch nothing."""


def export_run(*, job_id: int) -> ExportJob:
    """Builds the job's files. Idempotent: a finished job is left alone; a job run again after
    its worker died starts from nothing, its partial files never having been renamed. Each run
    takes the job by incrementing `attempts` and writes to the row only while that count is its
    own."""
    job = _export_take(job_id)
    if job is None:
        return ExportJob.objects.get(pk=job_id)
    own = ExportJob.objects.filter(pk=job.pk, attempts=job.attempts)
    # Written in a local scratch folder, then stored (shared volume or bucket) in a folder of
    # this attempt's own, so that a run presumed dead never overwrites its successor's files.
    scratch = tempfile.TemporaryDirectory(prefix="proofmark-export-")
    out = Path(scratch.name) / f"{job.campaign.slug}-{job.format}.{job.file_type}"
    stored = PurePosixPath("exports", str(job.pk), str(job.attempts))
    hf_folder = Path(scratch.name) / "hf" if job.layout == Layout.HF else None

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
        # after a refit (which may take long) the run beats and checks it still owns the job;
        # without one, on_total does both a few milliseconds later
        if confidence_refresh(campaign_id=job.campaign_id) and not own.update(
            heartbeat_at=timezone.now()
        ):
            raise _Superseded
        with scratch:
            manifest = dataset_write(
                campaign=job.campaign,
                fmt=job.format,
                file_type=job.file_type,
                options=ExportOptions.from_dict(job.filters),
                out=out,
                on_total=on_total,
                on_progress=on_progress,
                hf_folder=hf_folder,
            )
            if hf_folder is not None:
                bundle = hub_folder_zip(hf_folder, Path(hf_zip_path(out)))
                stored_file_put(bundle, str(stored / bundle.name))
            for local in export_paths(out):
                if local.exists():  # the checkpoints file only where schemes were used
                    stored_file_put(local, str(stored / local.name))
            if manifest.get("pictures"):
                bundle = pictures_zip(out)
                stored_file_put(bundle, str(stored / bundle.name))
    except _Superseded:
        logger.warning("export %s: taken over by a later run, this one stops", job.pk)
        return ExportJob.objects.get(pk=job.pk)
    except Exception as exc:
        logger.exception("export %s failed", job.pk)
        if own.update(
            status=JobStatus.FAILED,
            error=f"{type(exc).__name__}: {exc}",
            finished_at=timezone.now(),
        ):
            _finished_announce(job.pk, JobStatus.FAILED)
        return ExportJob.objects.get(pk=job.pk)
    info = manifest["files"][out.name]
    if own.update(
        status=JobStatus.SUCCEEDED,
        processed=info["rows"],
        file=str(stored / out.name),
        size=info["size"],
        sha256=info["sha256"],
        manifest=manifest,
        finished_at=timezone.now(),
    ):
        _finished_announce(job.pk, JobStatus.SUCCEEDED)
    return ExportJob.objects.get(pk=job.pk)


def _finished_announce(job_id: int, status: str) -> None:
    """Sends `exports.signals.export_finished` once the outcome is committed; a receiver that
    raises is logged and never changes the export's outcome."""
    send_on_commit(
        export_finished,
        sender=ExportJob,
        event="export_finished",
        job_id=job_id,
        status=str(status),
    )


def export_fail(*, job_id: int, reason: str) -> None:
    """Records a failure outside the export's own work (its worker kept dying) and removes every
    file the job left, so that nothing under its name looks complete."""
    rows = ExportJob.objects.filter(pk=job_id)
    known = rows.filter(status=JobStatus.FAILED).exists()  # told once, when it first failed
    if (
        rows.exclude(status=JobStatus.SUCCEEDED).update(
            status=JobStatus.FAILED, error=reason, finished_at=timezone.now()
        )
        and not known
    ):
        _finished_announce(job_id, JobStatus.FAILED)
    stored_folder_delete(f"exports/{job_id}")


def pictures_zip(out: Path) -> Path:
    """The pictures written beside `out`, in one .zip (`pictures/<sha256>.<ext>` inside): the
    download part `pictures`, to unpack beside the data file."""
    bundle = out.with_name(f"{out.name}.pictures.zip")
    with zipfile.ZipFile(bundle, "w", compression=zipfile.ZIP_STORED) as archive:
        for file in sorted((out.parent / PICTURE_FOLDER).iterdir()):
            archive.write(file, f"{PICTURE_FOLDER}/{file.name}")
    return bundle


def export_file_open(job: ExportJob, part: str) -> tuple[IO[bytes], str]:
    """The stored data file, or its `manifest`, `card`, `pictures` (a .zip of the pictures
    its texts refer to) or `hf` (the Hugging Face dataset folder, as a .zip, of a job with
    layout `hf`), open for reading, and its file name.
    ExportError while the job is not done, KeyError for another part, FileNotFoundError when
    the file is no longer stored."""
    if job.status != JobStatus.SUCCEEDED or not job.file:
        raise ExportError("this export has no file yet")
    data = PurePosixPath(job.file)
    manifest, card = companion_paths(data)
    pictures = data.with_name(f"{data.name}.pictures.zip")
    parts = {
        "data": data,
        "manifest": manifest,
        "card": card,
        "pictures": pictures,
        "hf": hf_zip_path(data),
    }
    parts["checkpoints"] = checkpoints_path(data)
    name = str(parts[part])
    if part != "data" and not default_storage.exists(name):
        # jobs finished before companions took the data file's whole name: STEM.manifest.json
        stem = data.name.rsplit(".", 1)[0]
        legacy = str(
            PurePosixPath(name).with_name(PurePosixPath(name).name.replace(data.name, stem, 1))
        )
        name = legacy if default_storage.exists(legacy) else name
    if not default_storage.exists(name):
        raise FileNotFoundError(name)
    return default_storage.open(name, "rb"), PurePosixPath(name).name
