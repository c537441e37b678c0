"""The one import service: `corpus_import` streams records from the readers into batched
upserts on the natural keys (DESIGN.md), inside one transaction.

Each batch fetches the existing rows of its keys, merges, and writes only what differs: new
and changed rows go in one `INSERT ... ON CONFLICT DO UPDATE` per model (bulk_create with
update_conflicts), unchanged rows are not touched (no updated_at churn). Any error rolls the
whole import back; a dry run does every write and rolls back, so its counts are exact.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from django.db import DatabaseError, transaction

from llm.scores import verifier_score
from problems.importers import (
    AnalysisIn,
    Issue,
    ProblemIn,
    Progress,
    ProofIn,
    SolutionIn,
    Where,
    read_path,
)
from problems.importers.base import error
from problems.models import Problem, Proof, ReferenceSolution, VerifierAnalysis
from problems.signals import corpus_imported

BATCH_SIZE = 1000
MAX_ISSUES = 1000
MODELS = ("problems", "reference_solutions", "proofs", "analyses")
PROBLEM_FIELDS = ("statement", "contest", "year", "number", "topic", "final_answer")
SOURCED_LISTS = ("imported_schemes", "imported_ratings")


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass
class ImportReport:
    counts: dict[str, dict[str, int]] = field(
        default_factory=lambda: {
            name: {"created": 0, "updated": 0, "unchanged": 0} for name in MODELS
        }
    )
    issues: list[dict] = field(default_factory=list)
    errors: int = 0
    warnings: int = 0
    records: int = 0
    dry_run: bool = False
    committed: bool = False
    problem_ids: list[int] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.errors == 0

    def add(self, issue: Issue) -> None:
        if issue.level == "error":
            self.errors += 1
        else:
            self.warnings += 1
        if len(self.issues) < MAX_ISSUES:
            self.issues.append(issue.to_dict())

    def to_dict(self) -> dict:
        return {
            "ok": self.ok,
            "dry_run": self.dry_run,
            "committed": self.committed,
            "records": self.records,
            "counts": self.counts,
            "errors": self.errors,
            "warnings": self.warnings,
            "issues": self.issues,
            "issues_truncated": self.errors + self.warnings > len(self.issues),
        }

    def lines(self) -> list[str]:
        """The report in words, one line each (what the command prints)."""
        out = []
        for issue in self.issues:
            where = issue["file"] + (f":{issue['line']}" if issue["line"] is not None else "")
            field_part = f" field {issue['field']!r}:" if issue["field"] else ""
            out.append(f"{issue['level']}: {where}:{field_part} {issue['message']}")
        if self.errors + self.warnings > len(self.issues):
            out.append(f"... and {self.errors + self.warnings - len(self.issues)} more")
        for name in MODELS:
            count = self.counts[name]
            out.append(
                f"{name}: {count['created']} created, {count['updated']} updated, "
                f"{count['unchanged']} unchanged"
            )
        if not self.ok:
            out.append(f"{self.errors} error(s): nothing was written.")
        elif self.dry_run:
            out.append("Dry run: nothing was written.")
        return out


def _merge_sourced(old: list, new: list) -> list:
    """Entries of `new` replace those of `old` with the same source; then one per content."""
    sources = {entry.get("source") for entry in new}
    merged = [entry for entry in old if entry.get("source") not in sources] + list(new)
    out, seen = [], set()
    for entry in merged:
        key = (entry.get("format"), entry.get("kind"), repr(entry.get("content", entry)))
        if "content" in entry and key in seen:
            continue
        seen.add(key)
        out.append(entry)
    return out


def merge_metadata(old: dict, new: dict) -> dict:
    merged = dict(old)
    for key, value in new.items():
        if key in SOURCED_LISTS and isinstance(value, list):
            merged[key] = _merge_sourced(old.get(key) or [], value)
        else:
            merged[key] = value
    return merged


def _merge_problem(target: dict, record: ProblemIn) -> dict:
    for name in PROBLEM_FIELDS:
        value = getattr(record, name)
        if value not in ("", None):
            target[name] = value
    if not target.get("source"):
        target["source"] = record.source
    metadata = dict(record.metadata)
    if record.schemes:
        metadata["imported_schemes"] = record.schemes
    target["metadata"] = merge_metadata(target.get("metadata") or {}, metadata)
    return target


class Upserter:
    """Batches records, resolves natural keys and writes the differences."""

    def __init__(self, report: ImportReport, batch_size: int = BATCH_SIZE):
        self.report = report
        self.batch_size = batch_size
        self.problems: dict[str, tuple[Where, dict]] = {}
        self.solutions: dict[tuple[str, str], SolutionIn] = {}
        self.proofs: dict[tuple[str, str, str], ProofIn] = {}
        self.analyses: dict[tuple, AnalysisIn] = {}
        self.problem_ids: dict[str, int] = {}
        self.seen_problems: set[int] = set()
        self.created_problems: set[int] = set()
        self.updated_problems: set[int] = set()
        self.touched_problems: set[int] = set()

    # -- collecting ------------------------------------------------------------------------

    def add(self, record) -> None:
        self.report.records += 1
        if isinstance(record, ProblemIn):
            where, merged = self.problems.get(record.external_id, (record.where, {}))
            self.problems[record.external_id] = (where, _merge_problem(merged, record))
        elif isinstance(record, SolutionIn):
            self.solutions[(record.problem, text_hash(record.text))] = record
        elif isinstance(record, ProofIn):
            key = (record.problem, record.generator, record.sample_key)
            if key in self.proofs:
                self.report.add(
                    Issue(
                        "warning",
                        record.where,
                        f"the same proof (problem {record.problem}, generator {record.generator}"
                        f", sample {record.sample_key}) is also on line "
                        f"{self.proofs[key].where.line}; the last one counts.",
                    )
                )
            self.proofs[key] = record
        elif isinstance(record, AnalysisIn):
            if not record.sample_key:
                record.sample_key = text_hash(record.text)[:16]
            key = (
                record.problem,
                record.generator,
                record.proof_sample_key,
                record.verifier,
                record.sample_key,
            )
            self.analyses[key] = record
        if len(self.problems) + len(self.proofs) + len(self.analyses) >= self.batch_size:
            self.flush()

    # -- writing ---------------------------------------------------------------------------

    def flush(self) -> None:
        if self.report.errors:
            self._clear()
            return
        self._flush_problems()
        self._flush_solutions()
        proof_ids = self._flush_proofs()
        self._flush_analyses(proof_ids)
        self._clear()
        if len(self.problem_ids) > 20 * self.batch_size:
            self.problem_ids.clear()

    def finish(self) -> None:
        self.flush()
        counts = self.report.counts["problems"]
        changed = self.created_problems | self.updated_problems
        counts["created"] = len(self.created_problems)
        counts["updated"] = len(self.updated_problems - self.created_problems)
        counts["unchanged"] = len(self.seen_problems - changed)
        self.report.problem_ids = sorted(changed | self.touched_problems)

    def _clear(self) -> None:
        self.problems.clear()
        self.solutions.clear()
        self.proofs.clear()
        self.analyses.clear()

    def _count(self, model: str, status: str, number: int = 1) -> None:
        self.report.counts[model][status] += number

    def _problem_id(self, external_ids: Iterable[str]) -> None:
        missing = {key for key in external_ids if key not in self.problem_ids}
        if missing:
            self.problem_ids.update(
                Problem.objects.filter(external_id__in=missing).values_list("external_id", "id")
            )

    def _unknown_problem(self, where: Where, external_id: str) -> None:
        self.report.add(
            error(
                where,
                f"no problem {external_id!r} in this file or in the database.",
                "problem" if "jsonl" in where.file else "problem_id",
            )
        )

    def _flush_problems(self) -> None:
        if not self.problems:
            return
        existing = {
            row["external_id"]: row
            for row in Problem.objects.filter(external_id__in=list(self.problems)).values(
                "id", "external_id", "source", "metadata", *PROBLEM_FIELDS
            )
        }
        writes = []
        for external_id, (_, merged) in self.problems.items():
            old = existing.get(external_id)
            if old is None:
                writes.append(Problem(external_id=external_id, **merged))
                continue
            self.seen_problems.add(old["id"])
            self.problem_ids[external_id] = old["id"]
            desired = _merge_problem_row(old, merged)
            if all(desired[name] == old[name] for name in desired):
                continue
            self.updated_problems.add(old["id"])
            writes.append(Problem(external_id=external_id, **desired))
        if writes:
            created = {obj.external_id for obj in writes if obj.external_id not in existing}
            saved = Problem.objects.bulk_create(
                writes,
                update_conflicts=True,
                unique_fields=["external_id"],
                update_fields=[*PROBLEM_FIELDS, "source", "metadata", "updated_at"],
            )
            for obj in saved:
                if obj.pk is None:
                    obj.pk = Problem.objects.get(external_id=obj.external_id).pk
                self.problem_ids[obj.external_id] = obj.pk
                self.seen_problems.add(obj.pk)
                if obj.external_id in created:
                    self.created_problems.add(obj.pk)

    def _flush_solutions(self) -> None:
        if not self.solutions:
            return
        self._problem_id(problem for problem, _ in self.solutions)
        wanted: dict[tuple[int, str], SolutionIn] = {}
        for (problem, digest), record in self.solutions.items():
            problem_id = self.problem_ids.get(problem)
            if problem_id is None:
                self._unknown_problem(record.where, problem)
                continue
            wanted[(problem_id, digest)] = record
        existing = set(
            ReferenceSolution.objects.filter(
                problem_id__in={key[0] for key in wanted}, text_hash__in={key[1] for key in wanted}
            ).values_list("problem_id", "text_hash")
        )
        new = [
            ReferenceSolution(
                problem_id=key[0],
                text=record.text,
                text_hash=key[1],
                source=record.source,
                metadata=record.metadata,
            )
            for key, record in wanted.items()
            if key not in existing
        ]
        self._count("reference_solutions", "unchanged", len(wanted) - len(new))
        self._count("reference_solutions", "created", len(new))
        if new:
            ReferenceSolution.objects.bulk_create(new, ignore_conflicts=True)
            self.touched_problems.update(obj.problem_id for obj in new)

    def _flush_proofs(self) -> dict[tuple[int, str, str], int]:
        """Writes the batch's proofs; returns their ids by (problem id, generator, sample)."""
        ids: dict[tuple[int, str, str], int] = {}
        if not self.proofs:
            return ids
        self._problem_id(problem for problem, _, _ in self.proofs)
        wanted: dict[tuple[int, str, str], ProofIn] = {}
        for (problem, generator, sample), record in self.proofs.items():
            problem_id = self.problem_ids.get(problem)
            if problem_id is None:
                self._unknown_problem(record.where, problem)
                continue
            wanted[(problem_id, generator, sample)] = record
        existing = {
            (row[1], row[2], row[3]): row
            for row in Proof.objects.filter(
                problem_id__in={key[0] for key in wanted},
                generator__in={key[1] for key in wanted},
                sample_key__in={key[2] for key in wanted},
            ).values_list(
                "id",
                "problem_id",
                "generator",
                "sample_key",
                "text_hash",
                "sample_index",
                "source",
                "metadata",
            )
        }
        writes = []
        for key, record in wanted.items():
            digest = text_hash(record.text)
            old = existing.get(key)
            metadata = merge_metadata(old[7], record.metadata) if old else record.metadata
            if old is not None:
                ids[key] = old[0]
                if (old[4], old[5], old[6], old[7]) == (
                    digest,
                    record.sample_index,
                    record.source,
                    metadata,
                ):
                    self._count("proofs", "unchanged")
                    continue
            self._count("proofs", "updated" if old else "created")
            self.touched_problems.add(key[0])
            writes.append(
                Proof(
                    problem_id=key[0],
                    generator=key[1],
                    sample_key=key[2],
                    sample_index=record.sample_index,
                    text=record.text,
                    text_hash=digest,
                    source=record.source,
                    metadata=metadata,
                )
            )
        if writes:
            saved = Proof.objects.bulk_create(
                writes,
                update_conflicts=True,
                unique_fields=["problem", "generator", "sample_key"],
                update_fields=[
                    "sample_index",
                    "text",
                    "text_hash",
                    "source",
                    "metadata",
                    "updated_at",
                ],
            )
            for obj in saved:
                if obj.pk is not None:
                    ids[(obj.problem_id, obj.generator, obj.sample_key)] = obj.pk
        return ids

    def _flush_analyses(self, proof_ids: dict[tuple[int, str, str], int]) -> None:
        if not self.analyses:
            return
        self._problem_id(key[0] for key in self.analyses)
        wanted: dict[tuple[int, str, str], AnalysisIn] = {}
        lookups: dict[tuple[int, str, str], list[AnalysisIn]] = {}
        for record in self.analyses.values():
            problem_id = self.problem_ids.get(record.problem)
            if problem_id is None:
                self._unknown_problem(record.where, record.problem)
                continue
            proof_key = (problem_id, record.generator, record.proof_sample_key)
            lookups.setdefault(proof_key, []).append(record)
        missing = [key for key in lookups if key not in proof_ids]
        if missing:
            for row in Proof.objects.filter(
                problem_id__in={key[0] for key in missing},
                generator__in={key[1] for key in missing},
                sample_key__in={key[2] for key in missing},
            ).values_list("id", "problem_id", "generator", "sample_key"):
                proof_ids.setdefault((row[1], row[2], row[3]), row[0])
        for proof_key, records in lookups.items():
            proof_id = proof_ids.get(proof_key)
            for record in records:
                if proof_id is None:
                    self.report.add(
                        error(
                            record.where,
                            f"no proof by {record.generator!r} (sample "
                            f"{record.proof_sample_key!r}) of problem {record.problem!r} in this "
                            "file or in the database.",
                            "proof_sample",
                        )
                    )
                    continue
                wanted[(proof_id, record.verifier, record.sample_key)] = record
        existing = {
            (row[1], row[2], row[3]): row
            for row in VerifierAnalysis.objects.filter(
                proof_id__in={key[0] for key in wanted},
                verifier__in={key[1] for key in wanted},
                sample_key__in={key[2] for key in wanted},
            ).values_list(
                "id", "proof_id", "verifier", "sample_key", "text_hash", "source", "metadata"
            )
        }
        writes = []
        for key, record in wanted.items():
            digest = text_hash(record.text)
            old = existing.get(key)
            metadata = merge_metadata(old[6], record.metadata) if old else record.metadata
            if old is not None and (old[4], old[5], old[6]) == (digest, record.source, metadata):
                self._count("analyses", "unchanged")
                continue
            self._count("analyses", "updated" if old else "created")
            score = verifier_score(record.text)
            writes.append(
                VerifierAnalysis(
                    proof_id=key[0],
                    verifier=key[1],
                    sample_key=key[2],
                    text=record.text,
                    text_hash=digest,
                    score=score.score,
                    kept_contract=score.kept_contract,
                    score_problem=score.problem[:200],
                    source=record.source,
                    metadata=metadata,
                )
            )
        if writes:
            VerifierAnalysis.objects.bulk_create(
                writes,
                update_conflicts=True,
                unique_fields=["proof", "verifier", "sample_key"],
                update_fields=[
                    "text",
                    "text_hash",
                    "score",
                    "kept_contract",
                    "score_problem",
                    "source",
                    "metadata",
                    "updated_at",
                ],
            )
            touched = Proof.objects.filter(id__in={obj.proof_id for obj in writes})
            self.touched_problems.update(touched.values_list("problem_id", flat=True))


def _merge_problem_row(old: dict, merged: dict) -> dict:
    """What the problem row becomes: incoming non-empty fields win; metadata merges."""
    desired = {name: old[name] for name in (*PROBLEM_FIELDS, "source", "metadata")}
    for name in PROBLEM_FIELDS:
        if merged.get(name) not in ("", None):
            desired[name] = merged[name]
    if not desired["source"]:
        desired["source"] = merged.get("source", "")
    desired["metadata"] = merge_metadata(old["metadata"] or {}, merged.get("metadata") or {})
    return desired


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
) -> ImportReport:
    """Imports a file or folder in one transaction; returns the report.

    All or nothing: any error rolls everything back (the report lists every error with its
    file, line and field). A dry run rolls back too, after computing exact counts. After a
    commit, `problems.signals.corpus_imported` is sent with the ids of the problems created
    or changed.
    """
    report = ImportReport(dry_run=dry_run)
    progress = Progress()
    upserter = Upserter(report, batch_size=batch_size)
    try:
        with transaction.atomic():
            try:
                for item in read_path(path, fmt, progress=progress, name=name):
                    if isinstance(item, Issue):
                        report.add(item)
                        continue
                    upserter.add(item)
                    if on_progress and report.records % batch_size == 0:
                        on_progress(progress.bytes_read, report)
                upserter.finish()
            except DatabaseError as exc:
                report.add(error(Where(name or path.name), f"The database refused a batch: {exc}"))
            if not report.ok or dry_run:
                raise _Rollback
    except _Rollback:
        pass
    else:
        report.committed = True
        problem_ids = report.problem_ids
        transaction.on_commit(lambda: corpus_imported.send(sender=Problem, problem_ids=problem_ids))
    if on_progress:
        on_progress(progress.bytes_read, report)
    if not report.ok:
        report.problem_ids = []
    return report
