"""Proofmark's own JSONL format: one object a line, its "kind" saying what it holds.

    {"kind": "problem", "id": "USAMO-2025-P1", "statement": "...", "contest": "USAMO",
     "year": 2025, "number": "1", "topic": "N", "final_answer": "", "source": "...",
     "metadata": {}, "reference_solutions": ["...", {"text": "...", "source": "..."}],
     "schemes": [{"format": "proofbench_markdown", "content": "..."}]}
    {"kind": "proof", "problem": "USAMO-2025-P1", "generator": "model-x", "sample": "0",
     "text": "...", "source": "...", "metadata": {},
     "ratings": [{"source": "...", "kind": "expert", "value": 5, "max": 7}],
     "analyses": [{"verifier": "...", "sample": "0", "text": "..."}]}
    {"kind": "analysis", "problem": "USAMO-2025-P1", "generator": "model-x", "proof_sample": "0",
     "verifier": "verifier-y", "sample": "0", "text": "...", "metadata": {}}

Required: problem id + statement; proof problem + generator + text; analysis problem +
generator + verifier + text. A proof's sample defaults to "0"; an analysis's sample to a hash of
its text. The problem of a proof may come earlier in the file or already be in the database.
"""

from collections.abc import Iterator
from pathlib import Path

from problems.importers.base import (
    SCHEME_FORMATS,
    AnalysisIn,
    Issue,
    Item,
    ProblemIn,
    Progress,
    ProofIn,
    Row,
    SolutionIn,
    Where,
    clean_json,
    error,
    rows,
    topic_of,
    warning,
)

NAME = "jsonl"
# Proofmark's own format: a record states its licence in its metadata; none is assumed.
LICENCE = ""
KEYS = {
    "problem": {
        "kind",
        "id",
        "statement",
        "contest",
        "year",
        "number",
        "topic",
        "final_answer",
        "source",
        "metadata",
        "reference_solutions",
        "schemes",
    },
    "proof": {
        "kind",
        "problem",
        "generator",
        "sample",
        "text",
        "source",
        "metadata",
        "ratings",
        "analyses",
        "error_spans",
    },
    "analysis": {
        "kind",
        "problem",
        "generator",
        "proof_sample",
        "verifier",
        "sample",
        "text",
        "source",
        "metadata",
    },
}


def read(path: Path, progress: Progress, name: str) -> Iterator[Item]:
    source = f"{NAME} {name}"
    warned: set[str] = set()
    for where, data in rows(path, progress, name):
        if isinstance(data, Issue):
            yield data
            continue
        if not isinstance(data, dict):
            yield error(where, "The line is not a JSON object.")
            continue
        kind = data.get("kind")
        if kind not in KEYS:
            yield error(where, f"{kind!r} is not one of problem, proof, analysis.", "kind")
            continue
        unknown = sorted(set(data) - KEYS[kind])
        if unknown and kind not in warned:
            warned.add(kind)
            yield warning(where, f"Unknown {kind} field(s) ignored: {', '.join(unknown)}.")
        reader = {"problem": problem_records, "proof": proof_records, "analysis": analysis_records}
        yield from reader[kind](where, data, source)


def problem_records(where: Where, data: dict, source: str) -> Iterator[Item]:
    issues: list[Issue] = []
    row = Row(where, data, issues)
    external_id = row.key("id", required=True)
    statement = row.text("statement", required=True)
    topic = row.text("topic")
    problem = ProblemIn(
        where,
        external_id,
        statement=statement,
        contest=row.key("contest"),
        year=row.integer("year"),
        number=row.key("number")[:20],
        topic=topic_of(topic),
        final_answer=row.text("final_answer"),
        source=row.key("source") or source,
        metadata=clean_json(row.mapping("metadata")),
    )
    if topic and not problem.topic:
        issues.append(error(where, f"{topic!r} is not A, C, G or N.", "topic"))
    solutions = []
    for index, entry in enumerate(_list(row, "reference_solutions")):
        field = f"reference_solutions[{index}]"
        entry = {"text": entry} if isinstance(entry, str) else entry
        text = entry.get("text") if isinstance(entry, dict) else None
        if not isinstance(text, str) or not text.strip():
            issues.append(error(where, "has no text.", field))
            continue
        solutions.append(
            SolutionIn(
                where,
                external_id,
                text,
                source=str(entry.get("source") or source),
                problem_field="id",
            )
        )
    for index, entry in enumerate(_list(row, "schemes")):
        field = f"schemes[{index}]"
        if not isinstance(entry, dict) or entry.get("format") not in SCHEME_FORMATS:
            issues.append(
                error(where, f"format must be one of {', '.join(SCHEME_FORMATS)}.", field)
            )
            continue
        if entry.get("content") in (None, ""):
            issues.append(error(where, "has no content.", field))
            continue
        problem.schemes.append(
            {
                "format": entry["format"],
                "source": str(entry.get("source") or source),
                "content": clean_json(entry["content"]),
            }
        )
    if issues:
        yield from issues
        return
    yield problem
    yield from solutions


def proof_records(where: Where, data: dict, source: str) -> Iterator[Item]:
    issues: list[Issue] = []
    row = Row(where, data, issues)
    problem = row.key("problem", required=True)
    generator = row.key("generator", required=True)
    sample = row.key("sample", default="0")
    text = row.text("text", required=True, think=True)
    metadata = clean_json(row.mapping("metadata"))
    ratings = []
    for index, rating in enumerate(_list(row, "ratings")):
        field = f"ratings[{index}]"
        inner = Row(where, rating if isinstance(rating, dict) else {}, issues)
        value = inner.number(f"{field}.value", inner.data.get("value"))
        maximum = inner.number(f"{field}.max", inner.data.get("max"))
        if value is None or maximum is None:
            issues.append(error(where, "needs a value and a max.", field))
            continue
        if not 0 <= value <= maximum:
            issues.append(error(where, f"{value} is outside 0-{maximum}.", f"{field}.value"))
            continue
        kind = inner.data.get("kind", "expert")
        if kind not in ("expert", "automatic"):
            issues.append(error(where, f"{kind!r} is not expert or automatic.", f"{field}.kind"))
            continue
        ratings.append(
            {
                "source": str(inner.data.get("source") or source),
                "kind": kind,
                "value": value,
                "max": maximum,
                "raw": clean_json(inner.data.get("raw", value)),
            }
        )
    if ratings:
        metadata["imported_ratings"] = ratings
    spans = _list(row, "error_spans")
    if spans:
        metadata["imported_error_spans"] = clean_json(spans)
    analyses = []
    for index, entry in enumerate(_list(row, "analyses")):
        if not isinstance(entry, dict):
            issues.append(error(where, "is not an object.", f"analyses[{index}]"))
            continue
        inner = Row(where, entry, issues)
        verifier = inner.key("verifier", required=True)
        analysis_text = inner.text("text", required=True)
        analyses.append(
            AnalysisIn(
                where,
                problem,
                generator,
                sample,
                verifier,
                analysis_text,
                sample_key=inner.key("sample"),
                source=str(entry.get("source") or source),
                metadata=clean_json(inner.mapping("metadata")),
                problem_field="problem",
            )
        )
    if issues:
        yield from issues
        return
    index = int(sample) if sample.isdigit() else None
    yield ProofIn(
        where,
        problem,
        generator,
        sample,
        text,
        sample_index=index,
        source=row.key("source") or source,
        metadata=metadata,
        problem_field="problem",
    )
    yield from analyses


def analysis_records(where: Where, data: dict, source: str) -> Iterator[Item]:
    issues: list[Issue] = []
    row = Row(where, data, issues)
    analysis = AnalysisIn(
        where,
        row.key("problem", required=True),
        row.key("generator", required=True),
        row.key("proof_sample", default="0"),
        row.key("verifier", required=True),
        row.text("text", required=True),
        sample_key=row.key("sample"),
        source=row.key("source") or source,
        metadata=clean_json(row.mapping("metadata")),
        problem_field="problem",
    )
    if issues:
        yield from issues
        return
    yield analysis


def _list(row: Row, key: str) -> list:
    value = row.data.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        row.issues.append(error(row.where, "must be a list.", key))
        return []
    return value
