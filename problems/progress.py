"""An import's progress while its transaction is open, where the import page can read it.

On PostgreSQL the job runner writes it on the job's row through a connection of its own
(problems.services.jobs). SQLite, the embedded default, has one writer at a time and the import
holds it, so there the progress goes to a small file in the run folder instead (the embedded
mode runs on one machine), which the page's selector lays over the row while the job runs."""

from __future__ import annotations

import json
import os
from pathlib import Path

from django.conf import settings


def import_progress_path(job_id: int) -> Path:
    return Path(settings.RUN_DIR) / "progress" / f"import-{job_id}.json"


def import_progress_write(*, job_id: int, processed: int, counts: dict) -> None:
    """Replaces the file in one step, so a reader never sees half of it."""
    path = import_progress_path(job_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(f".{os.getpid()}.tmp")
    partial.write_text(json.dumps({"processed": processed, "counts": counts}), encoding="utf-8")
    os.replace(partial, path)


def import_progress_read(*, job_id: int) -> dict | None:
    try:
        return json.loads(import_progress_path(job_id).read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return None


def import_progress_remove(*, job_id: int) -> None:
    import_progress_path(job_id).unlink(missing_ok=True)
