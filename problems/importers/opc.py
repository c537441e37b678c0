"""Open Proof Corpus (insait-institute/open-proof-corpus) files, three shapes:

- raw problem files (data/raw/...): a JSON list of {problem_id, metadata, problem,
  solutions: [{solution, author}]};
- solved problem files (data/solved/...): one JSON object, the same plus grading_scheme, points
  and attempts: [{model_id, solution, llm_judgment, grading, annotations, timestamp}];
- training rows (data/train/..., one JSON object a line): problem_id, metadata, solutions,
  grading_scheme, model_id, timestamp, annotations, llm_judgment, reward_model{ground_truth:
  "correct" | "incorrect"} and the judge prompt, whose "### Problem Statement:" and
  "### Model Solution:" sections hold the statement and the proof.

A proof's sample key is the attempt's generation timestamp, so the same attempt found in a
solved file and in a training file is one proof. Human labels are binary (max 1); human
annotations become error spans with offsets into the proof text.
"""

from collections.abc import Iterator
from pathlib import Path

from problems.importers.base import (
    Issue,
    Item,
    ProblemIn,
    Progress,
    ProofIn,
    Row,
    SolutionIn,
    Where,
    binary_kind,
    clean_json,
    error,
    rows,
    unstorable_fields,
    warning,
)
from problems.importers.jsonstream import json_array_rows

NAME = "opc"
# insait-institute/open-proof-corpus: LICENSE.md is Apache-2.0 (a README badge says MIT).
LICENCE = "Apache-2.0"
STATEMENT_HEADING = "### Problem Statement:"
PROOF_HEADING = "### Model Solution:"
LABELS = {"correct": 1, "incorrect": 0}


def read(path: Path, progress: Progress, name: str) -> Iterator[Item]:
    source = f"{NAME} {name}"
    if path.suffix.lower() != ".json" or binary_kind(path):
        for where, data in rows(path, progress, name):
            if isinstance(data, Issue):
                yield data
            elif not isinstance(data, dict):
                yield error(where, "The line is not a JSON object.")
            else:
                yield from train_records(where, data, source)
        return
    entries = json_array_rows(  # unchecked: problem_records checks an entry and each attempt
        path,
        progress,
        name,
        shape="An OPC file is a JSON object or a list of them.",
        objects=True,
        storable=False,
    )
    for where, entry in entries:
        if isinstance(entry, Issue):
            yield entry
        elif isinstance(entry, dict):
            yield from problem_records(where, entry, source)
        else:
            yield error(where, "The entry is not a JSON object.")


def problem_in(row: Row, statement: str, source: str) -> ProblemIn:
    meta = row.data.get("metadata") if isinstance(row.data.get("metadata"), dict) else {}
    meta_kept = {key: value for key, value in meta.items() if key != "images"}  # read as pictures
    metadata = {"opc_metadata": clean_json(meta_kept)} if meta_kept else {}
    if row.data.get("grading_scheme"):
        metadata["opc_grading_scheme"] = clean_json(row.data["grading_scheme"])
    year = meta.get("year")
    contest = meta.get("source") or meta.get("competition") or ""
    return ProblemIn(
        row.where,
        row.key("problem_id", required=True),
        images={**images_of(meta), **images_of(row.data)},
        statement=statement,
        contest=contest if isinstance(contest, str) else "",
        year=year if isinstance(year, int) else None,
        source=source,
        metadata=metadata,
    )


def images_of(data: object) -> dict:
    """The pictures an OPC entry ships by name (`images`: name -> base64 or a data URL; the
    Parquet files' placeholder `{"dummy": ""}` is nothing), which its text refers to."""
    images = data.get("images") if isinstance(data, dict) else None
    if not isinstance(images, dict):
        return {}
    return {str(name): value for name, value in images.items() if value}


def solutions_in(row: Row, problem_id: str, source: str) -> Iterator[SolutionIn]:
    solutions = row.data.get("solutions") or []
    if not isinstance(solutions, list):
        row.issues.append(error(row.where, "must be a list.", "solutions"))
        return
    for index, entry in enumerate(solutions):
        text = entry.get("solution") if isinstance(entry, dict) else None
        if not isinstance(text, str):
            row.issues.append(error(row.where, "has no text.", f"solutions[{index}].solution"))
            continue
        if text.strip():
            author = entry.get("author") or ""
            yield SolutionIn(
                row.where,
                problem_id,
                text,
                images={
                    **images_of(row.data.get("metadata")),
                    **images_of(row.data),
                    **images_of(entry),
                },
                source=source,
                metadata={"author": author} if author else {},
            )


def error_spans(row: Row, annotations: object, text: str, field: str) -> list[dict]:
    """OPC's human annotations as error spans (offsets into the proof text)."""
    spans = []
    for index, note in enumerate(annotations or []):
        where_field = f"{field}[{index}]"
        indices = note.get("original_text_indices") if isinstance(note, dict) else None
        if not (isinstance(indices, list) and len(indices) == 2):
            row.issues.append(error(row.where, "has no [start, end] offsets.", where_field))
            continue
        start, end = indices
        quote = note.get("original_text") or note.get("selected_text") or ""
        if not (isinstance(start, int) and isinstance(end, int) and 0 <= start <= end <= len(text)):
            row.issues.append(
                error(row.where, f"offsets {indices} fall outside the proof.", where_field)
            )
            continue
        if quote and text[start:end] != quote:
            found = text.find(quote)
            if found < 0:
                row.issues.append(
                    warning(row.where, "the quoted text is not at its offsets.", where_field)
                )
            else:
                start, end = found, found + len(quote)
        spans.append(
            {
                "start": start,
                "end": end,
                "quote": text[start:end],
                "category": note.get("category") or "",
                "note": note.get("comment") or "",
            }
        )
    return spans


def proof_metadata(row: Row, data: dict, text: str, source: str, field: str) -> dict:
    metadata: dict = {}
    spans = error_spans(row, data.get("annotations"), text, f"{field}annotations")
    if spans:
        metadata["imported_error_spans"] = spans
    if data.get("llm_judgment"):
        metadata["opc_llm_judgment"] = clean_json(data["llm_judgment"])
    grading = data.get("grading")
    if grading is not None:
        metadata["opc_grading"] = clean_json(grading)
        score = (
            grading.get("score", grading.get("points")) if isinstance(grading, dict) else grading
        )
        if isinstance(score, int | float) and not isinstance(score, bool):
            metadata["imported_ratings"] = [
                {
                    "source": source,
                    "kind": "expert",
                    "value": score,
                    "max": 1,
                    "raw": clean_json(grading),
                }
            ]
    return metadata


def problem_records(where: Where, data: dict, source: str) -> Iterator[Item]:
    """A problem entry and its attempts. Each attempt is a proof of its own: one that is bad (no
    text, offsets outside it, a character the database cannot store) fails alone, naming
    `attempts[i]`; a fault in the problem's own fields fails the entry."""
    issues: list[Issue] = [
        error(where, words, field)
        for field, words in unstorable_fields({k: v for k, v in data.items() if k != "attempts"})
    ]
    if issues:
        yield from issues
        return
    row = Row(where, data, issues)
    statement = row.text("problem", required=True)
    problem = problem_in(row, statement, source)
    solutions = list(solutions_in(row, problem.external_id, source))
    proofs, left_out = [], []
    attempts = data.get("attempts") or []
    if not isinstance(attempts, list):
        issues.append(error(where, "must be a list.", "attempts"))
        attempts = []
    for index, attempt in enumerate(attempts):
        field = f"attempts[{index}]."
        own = [error(where, words, path) for path, words in unstorable_fields(attempt, field[:-1])]
        if not isinstance(attempt, dict):
            own.append(error(where, "is not an object.", field[:-1]))
        if own:
            left_out.extend(own)
            continue
        inner = Row(where, attempt, own)
        text = inner.text("solution", think=True)
        generator = inner.key("model_id") or "unknown"
        key = inner.key("timestamp") or str(index)
        if not text.strip():
            own.append(error(where, "missing (required).", f"{field}solution"))
        metadata = proof_metadata(inner, attempt, text, source, field) if text.strip() else {}
        left_out.extend(own)
        if any(issue.level == "error" for issue in own):
            continue
        proofs.append(
            ProofIn(
                where,
                problem.external_id,
                generator,
                key,
                text,
                images={**problem.images, **images_of(attempt)},
                sample_index=index,
                source=source,
                metadata=metadata,
            )
        )
    yield from issues
    yield from left_out
    if any(issue.level == "error" for issue in issues):
        return
    yield problem
    yield from solutions
    yield from proofs


def train_records(where: Where, data: dict, source: str) -> Iterator[Item]:
    issues: list[Issue] = []
    row = Row(where, data, issues)
    prompt = data.get("prompt")
    content = ""
    if isinstance(prompt, list) and prompt and isinstance(prompt[0], dict):
        content = prompt[0].get("content") or ""
    statement_at = content.find(STATEMENT_HEADING)
    proof_at = content.find(PROOF_HEADING)
    if statement_at < 0 or proof_at < statement_at:
        issues.append(
            error(
                where,
                f"the judge prompt has no {STATEMENT_HEADING!r} and {PROOF_HEADING!r}.",
                "prompt",
            )
        )
        yield from issues
        return
    statement = content[statement_at + len(STATEMENT_HEADING) : proof_at].strip()
    proof_text = (
        Row(where, {"proof": content[proof_at + len(PROOF_HEADING) :]}, issues)
        .text("proof", think=True)
        .strip()
    )
    problem = problem_in(row, statement, source)
    problem.primary = False  # each training row repeats its problem
    solutions = list(solutions_in(row, problem.external_id, source))
    generator = row.key("model_id") or "unknown"
    key = row.key("timestamp")
    if not key:
        extra = data.get("extra_info") if isinstance(data.get("extra_info"), dict) else {}
        key = f"{extra.get('split', 'row')}-{extra.get('index', where.line)}"
    metadata = proof_metadata(row, data, proof_text, source, "")
    label = (data.get("reward_model") or {}).get("ground_truth")
    if label is not None:
        if label not in LABELS:
            issues.append(
                error(
                    where,
                    f"{label!r} is not 'correct' or 'incorrect'.",
                    "reward_model.ground_truth",
                )
            )
        else:
            metadata["imported_ratings"] = [
                {"source": source, "kind": "expert", "value": LABELS[label], "max": 1, "raw": label}
            ]
    if any(issue.level == "error" for issue in issues):
        yield from issues
        return
    yield from issues
    yield problem
    yield from solutions
    if proof_text:
        yield ProofIn(
            where,
            problem.external_id,
            generator,
            key,
            proof_text,
            source=source,
            metadata=metadata,
            images=problem.images,
        )
