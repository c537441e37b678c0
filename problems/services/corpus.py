"""The one import service: `corpus_import` streams records from the readers into batched
upserts on the natural keys (problems/models.py), inside one transaction.

Each batch fetches the existing rows of its keys, merges, and writes only what differs: new
and changed rows go in one `INSERT ... ON CONFLICT DO UPDATE` per model (bulk_create with
update_conflicts), unchanged rows are not touched (no updated_at churn). A bad record fails
alone: the readers turn it into errors naming its file, line and field (a row whose records
need each other fails as a whole), and every good record is written. Only a batch the database
refuses rolls the whole import back; a dry run does every write and rolls back, so its counts
are exact.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path

from django.db import DatabaseError, transaction

from core.threads import read_ahead
from problems.importers import (
    Issue,
    Progress,
    Where,
    read_path,
)
from problems.importers.base import error, metadata_too_large, warning
from problems.models import Problem
from problems.services.bulk import tune_transaction
from problems.services.pictures import pictures_store
from problems.services.report import BATCH_SIZE, ImportReport
from problems.services.upsert import Upserter
from problems.signals import corpus_imported, import_finished

logger = logging.getLogger(__name__)


def records_ahead(items: Iterator, chunk: int = 500, depth: int = 8) -> Iterator:
    """Iterates `items` in a thread, `depth` chunks of `chunk` records ahead of the caller
    (`core.queries.read_ahead`): reading and parsing the next records overlaps the database's
    work on the current batch (psycopg releases the GIL while it waits). The bound keeps memory
    flat; errors reach the caller."""
    for block in read_ahead(_batched(items, chunk), depth=depth):
        yield from block


def _batched(items: Iterator, size: int) -> Iterator[tuple]:
    iterator = iter(items)
    while block := tuple(itertools.islice(iterator, size)):
        yield block


SIGNAL_CHUNK = 1000


def _announce(report: ImportReport) -> None:
    """Sends `corpus_imported`, 1,000 problem ids at a time, so that a receiver loading the
    problems it is given works in bounded memory however large the import (receivers are
    idempotent, so a split send means the same as one). What a receiver made, when it says so
    in words (a `summary()`), goes on the report. The import is committed before this runs: a
    receiver that raises is logged and noted on the report as a warning, apart from the import's
    own outcome, which it never turns into a failure."""
    problem_ids = report.problem_ids
    for start in range(0, len(problem_ids), SIGNAL_CHUNK):
        chunk = problem_ids[start : start + SIGNAL_CHUNK]
        for receiver, response in corpus_imported.send_robust(sender=Problem, problem_ids=chunk):
            if isinstance(response, Exception):
                name = f"{receiver.__module__}.{receiver.__qualname__}"
                logger.error("corpus_imported: %s failed", name, exc_info=response)
                report.add(
                    warning(
                        Where("after the import"),
                        f"The follow-up {name} failed ({response!r}); the import itself is "
                        "committed.",
                    )
                )
                continue
            summary = getattr(response, "summary", None)
            if callable(summary) and summary():
                report.after_commit.append(summary())


def _finished_announce(report: ImportReport, name: str) -> None:
    """Sends `import_finished` once (a receiver that raises is logged, the import unchanged)."""
    for receiver, response in import_finished.send_robust(
        sender=Problem,
        name=name,
        committed=report.committed,
        records=report.records,
        errors=report.errors,
        warnings=report.warnings,
        counts=report.counts,
        outcome=report.outcome(),
    ):
        if isinstance(response, Exception):
            logger.error("import_finished: %r failed", receiver, exc_info=response)


class _Rollback(Exception):
    pass


def corpus_import(
    *,
    path: Path,
    fmt: str | None = None,
    dry_run: bool = False,
    name: str | None = None,
    batch_size: int = BATCH_SIZE,
    on_progress: Callable[[int, ImportReport], None] | None = None,
    licence: str = "",
) -> ImportReport:
    """Imports a file or folder in one transaction; returns the report.

    `licence` is the licence of the whole source, recorded on every record that states none
    (otherwise each format's known licence is: see problems.importers).

    Bad records fail alone: the report lists every error with its file, line and field, and
    every other record is imported. A batch the database refuses rolls everything back. A dry
    run rolls back too, after computing exact counts. After a commit,
    `problems.signals.corpus_imported` is sent with the ids of the problems created or changed.
    """
    report = ImportReport(dry_run=dry_run)
    progress = Progress()
    upserter = Upserter(report, batch_size=batch_size)
    try:
        with transaction.atomic():
            tune_transaction()
            try:
                for item in records_ahead(
                    read_path(path, fmt, progress=progress, name=name, licence=licence)
                ):
                    if isinstance(item, Issue):
                        report.add(item)
                        continue
                    if oversized := metadata_too_large(item):
                        report.add(oversized)
                        continue
                    if getattr(item, "pictures", None):
                        report.pictures += pictures_store(
                            found=item.pictures, write_files=not dry_run
                        )
                    upserter.add(item)
                    if on_progress and report.records % batch_size == 0:
                        on_progress(progress.bytes_read, report)
                upserter.finish()
            except DatabaseError as exc:
                report.add(error(Where(name or path.name), f"The database refused a batch: {exc}"))
                raise _Rollback from exc
            if dry_run:
                raise _Rollback
    except _Rollback:
        pass
    else:
        report.committed = True
        transaction.on_commit(lambda: _announce(report))
    report.formats = progress.formats
    if on_progress:
        on_progress(progress.bytes_read, report)
    if not report.committed:
        report.problem_ids = []
    if not dry_run:
        transaction.on_commit(partial(_finished_announce, report, name or path.name))
    return report
