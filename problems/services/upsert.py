"""Batched upserts on the natural keys: merge incoming records with the stored rows and
write only what differs (used by `corpus_import`)."""

from __future__ import annotations

from array import array
from collections.abc import Iterable

from django.db.models import Max
from django.utils import timezone

from llm.scores import verifier_score
from problems.importers import (
    AnalysisIn,
    Issue,
    ProblemIn,
    ProofIn,
    SolutionIn,
    Where,
)
from problems.importers.base import error
from problems.models import Problem, Proof, ReferenceSolution, VerifierAnalysis
from problems.services.bulk import insert_rows, rows_by_key, upsert_rows
from problems.services.report import (
    BATCH_SIZE,
    PROBLEM_FIELDS,
    SOURCED_LISTS,
    ImportReport,
    text_hash,
)
from problems.services.statements import StatementChange, statements_replace


def _merge_sourced(old: list, new: list) -> list:
    """Entries of `new` replace those of `old` with the same source (and version: a file may
    hold several versions of one problem's scheme); then one per content."""
    sources = {(entry.get("source"), entry.get("version")) for entry in new}
    merged = [
        entry for entry in old if (entry.get("source"), entry.get("version")) not in sources
    ] + list(new)
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
        # Problems created by this import have ids above `baseline`: they are kept in a compact
        # array; the sets hold only problems that existed before (memory flat on a new corpus).
        self.baseline = Problem.objects.aggregate(top=Max("id"))["top"] or 0
        self.created_problems = array("q")
        self.seen_problems: set[int] = set()
        self.updated_problems: set[int] = set()
        self.touched_problems: set[int] = set()
        self.fresh: set[int] = set()  # problems created by the batch being written
        # the last reference solution's (problem, text, hash): formats that repeat a problem's
        # reference on each of its proofs' rows hash it once, not once a row
        self.last_solution: tuple[str, str, str] = ("", "", "")

    # -- collecting ------------------------------------------------------------------------

    def add(self, record) -> None:
        self.report.records += 1
        if isinstance(record, ProblemIn):
            where, merged = self.problems.get(record.external_id, (record.where, {}))
            self.problems[record.external_id] = (where, _merge_problem(merged, record))
        elif isinstance(record, SolutionIn):
            problem, text, digest = self.last_solution
            if record.problem != problem or record.text != text:
                digest = text_hash(record.text)
                self.last_solution = (record.problem, record.text, digest)
            self.solutions[(record.problem, digest)] = record
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
        pending = len(self.problems) + len(self.solutions) + len(self.proofs) + len(self.analyses)
        if pending >= self.batch_size:
            self.flush()

    # -- writing ---------------------------------------------------------------------------

    def flush(self) -> None:
        self.fresh.clear()
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
        counts["created"] = len(self.created_problems)
        counts["updated"] = len(self.updated_problems)
        counts["unchanged"] = len(self.seen_problems - self.updated_problems)
        self.report.problem_ids = [
            *self.created_problems,
            *sorted(self.updated_problems | self.touched_problems),
        ]

    def _clear(self) -> None:
        self.problems.clear()
        self.solutions.clear()
        self.proofs.clear()
        self.analyses.clear()

    def _touch(self, problem_ids: Iterable[int]) -> None:
        """Problems whose solutions, proofs or analyses changed (new problems are known)."""
        self.touched_problems.update(pk for pk in problem_ids if pk <= self.baseline)

    def _count(self, model: str, status: str, number: int = 1) -> None:
        self.report.counts[model][status] += number

    def _problem_id(self, external_ids: Iterable[str]) -> None:
        missing = {key for key in external_ids if key not in self.problem_ids}
        if missing:
            found = rows_by_key(Problem, ["external_id"], [(key,) for key in missing], ["id"])
            self.problem_ids.update((key[0], row[0]) for key, row in found.items())

    def _unknown_problem(self, record: SolutionIn | ProofIn | AnalysisIn) -> None:
        self.report.add(
            error(
                record.where,
                f"no problem {record.problem!r} in this file or in the database.",
                record.problem_field,
            )
        )

    def _flush_problems(self) -> None:
        if not self.problems:
            return
        names = ("id", "source", "metadata", "statement_version", *PROBLEM_FIELDS)
        existing = {
            key[0]: dict(zip(names, row, strict=True))
            for key, row in rows_by_key(
                Problem, ["external_id"], [(key,) for key in self.problems], names
            ).items()
        }
        writes = []
        changes: dict[str, tuple[Where, StatementChange]] = {}
        for external_id, (where, merged) in self.problems.items():
            old = existing.get(external_id)
            if old is None:
                writes.append({"external_id": external_id, **merged})
                continue
            if old["id"] <= self.baseline:
                self.seen_problems.add(old["id"])
            self.problem_ids[external_id] = old["id"]
            desired = _merge_problem_row(old, merged)
            if all(desired[name] == old[name] for name in desired):
                continue
            if desired["statement"] != old["statement"]:
                desired["statement_version"] = old["statement_version"] + 1
                change = StatementChange(
                    old["id"],
                    old["statement_version"],
                    old["statement"],
                    old["source"],
                    merged.get("source") or "",
                )
                changes[external_id] = (where, change)
            if old["id"] <= self.baseline:
                self.updated_problems.add(old["id"])
            writes.append({"external_id": external_id, **desired})
        self._replace_statements(changes)
        now = timezone.now()
        columns = ("external_id", *PROBLEM_FIELDS, "source", "metadata", "created_at", "updated_at")
        rows: dict[bool, list[tuple]] = {True: [], False: []}
        for values in writes:
            row = tuple(
                values.get(column) if column == "year" else values.get(column, "")
                for column in columns[:-2]
            )
            rows[values["external_id"] in existing].append((*row, now, now))
        insert_rows(Problem, columns, rows[False])
        created = rows_by_key(Problem, ["external_id"], [row[:1] for row in rows[False]], ["id"])
        for (external_id,), (pk,) in created.items():
            self.problem_ids[external_id] = pk
            self.created_problems.append(pk)
            self.fresh.add(pk)
        versions = [w["statement_version"] for w in writes if w["external_id"] in existing]
        upsert_rows(
            Problem,
            (*columns, "statement_version"),
            [(*row, version) for row, version in zip(rows[True], versions, strict=True)],
            unique=["external_id"],
            update=[*PROBLEM_FIELDS, "source", "metadata", "statement_version", "updated_at"],
        )

    def _replace_statements(self, changes: dict[str, tuple[Where, StatementChange]]) -> None:
        """Past versions kept, their proofs pinned (problems/services/statements.py); a
        warning for each problem whose proofs keep a statement that is no longer shown."""
        pinned = statements_replace(changes=[change for _, change in changes.values()])
        for external_id, (where, change) in changes.items():
            count = pinned.get(change.problem_id, 0)
            if not count:
                continue
            self.report.add(
                Issue(
                    "warning",
                    where,
                    f"problem {external_id}: the statement differs from the one its {count} "
                    f"proof(s) were rated against; it is now version {change.version + 1}, "
                    f"and those proofs keep version {change.version} (their grades, ratings "
                    "and exports pair them with it).",
                    "statement",
                )
            )

    def _flush_solutions(self) -> None:
        if not self.solutions:
            return
        self._problem_id(problem for problem, _ in self.solutions)
        wanted: dict[tuple[int, str], SolutionIn] = {}
        for (problem, digest), record in self.solutions.items():
            problem_id = self.problem_ids.get(problem)
            if problem_id is None:
                self._unknown_problem(record)
                continue
            wanted[(problem_id, digest)] = record
        existing = rows_by_key(
            ReferenceSolution,
            ["problem_id", "text_hash"],
            [key for key in wanted if key[0] not in self.fresh],
            ["id"],
        )
        now = timezone.now()
        new = [
            (key[0], record.text, key[1], record.source, "", [], record.metadata, now)
            for key, record in wanted.items()
            if key not in existing
        ]
        self._count("reference_solutions", "unchanged", len(wanted) - len(new))
        self._count("reference_solutions", "created", len(new))
        insert_rows(
            ReferenceSolution,
            (
                "problem_id",
                "text",
                "text_hash",
                "source",
                "cluster_label",
                "main_steps",
                "metadata",
                "created_at",
            ),
            new,
        )
        self._touch(row[0] for row in new)

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
                self._unknown_problem(record)
                continue
            wanted[(problem_id, generator, sample)] = record
        proof_key = ["problem_id", "generator", "sample_key"]
        existing = {
            key: (row[0], *key, *row[1:])
            for key, row in rows_by_key(
                Proof,
                proof_key,
                [key for key in wanted if key[0] not in self.fresh],  # new problems: no proofs yet
                ["id", "text_hash", "sample_index", "source", "metadata"],
            ).items()
        }
        writes = []
        now = timezone.now()
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
            self._touch((key[0],))
            writes.append(
                (*key, record.sample_index, record.text, digest, record.source, metadata, now, now)
            )
        columns = (
            "problem_id",
            "generator",
            "sample_key",
            "sample_index",
            "text",
            "text_hash",
            "source",
            "metadata",
            "created_at",
            "updated_at",
        )
        insert_rows(Proof, columns, [row for row in writes if row[:3] not in existing])
        upsert_rows(
            Proof,
            columns,
            [row for row in writes if row[:3] in existing],
            unique=["problem_id", "generator", "sample_key"],
            update=["sample_index", "text", "text_hash", "source", "metadata", "updated_at"],
        )
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
                self._unknown_problem(record)
                continue
            proof_key = (problem_id, record.generator, record.proof_sample_key)
            lookups.setdefault(proof_key, []).append(record)
        missing = [key for key in lookups if key not in proof_ids]
        if missing:
            found = rows_by_key(Proof, ["problem_id", "generator", "sample_key"], missing, ["id"])
            for key, row in found.items():
                proof_ids.setdefault(key, row[0])
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
            key: (row[0], *key, *row[1:])
            for key, row in rows_by_key(
                VerifierAnalysis,
                ["proof_id", "verifier", "sample_key"],
                wanted,
                ["id", "text_hash", "source", "metadata"],
            ).items()
        }
        writes = []
        now = timezone.now()
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
                (
                    *key,
                    record.text,
                    digest,
                    score.score,
                    score.kept_contract,
                    score.problem[:200],
                    record.source,
                    metadata,
                    now,
                    now,
                )
            )
        upsert_rows(
            VerifierAnalysis,
            (
                "proof_id",
                "verifier",
                "sample_key",
                "text",
                "text_hash",
                "score",
                "kept_contract",
                "score_problem",
                "source",
                "metadata",
                "created_at",
                "updated_at",
            ),
            writes,
            unique=["proof_id", "verifier", "sample_key"],
            update=[
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
        if writes:
            touched = Proof.objects.filter(id__in={row[0] for row in writes})
            self._touch(touched.values_list("problem_id", flat=True))


def _merge_problem_row(old: dict, merged: dict) -> dict:
    """What the problem row becomes: incoming non-empty fields win; metadata merges."""
    desired = {
        name: old[name] for name in (*PROBLEM_FIELDS, "source", "metadata", "statement_version")
    }
    for name in PROBLEM_FIELDS:
        if merged.get(name) not in ("", None):
            desired[name] = merged[name]
    if not desired["source"]:
        desired["source"] = merged.get("source", "")
    desired["metadata"] = merge_metadata(old["metadata"] or {}, merged.get("metadata") or {})
    return desired
