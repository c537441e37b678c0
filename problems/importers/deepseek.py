"""DeepSeekMath-V2 evaluation files: `inputs/*.json` (a JSON list of {id, question, answer,
contest, problem_idx}) and `outputs/*.jsonl` (question, problem_idx, model_prediction {proof,
average_automatic_rating, human_rating}, and for IMO-ProofBench also solution, "grading
guidelines", level, source, type).

Human ratings keep their native maximum: Putnam out of 10, CMO out of 21, the rest out of 7;
the automatic rating is out of 1. Where DeepSeekMath-V2 corrected a statement it keeps the old
text as `question_original`: kept as an alternative statement of the problem (its metadata's
`alternative_statements`, shown to admins); `question` is the statement its proofs were rated
against.
"""

import re
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
    error,
    object_rows,
    rows,
    topic_of,
    unknown_columns,
)
from problems.importers.jsonstream import json_array_rows

NAME = "deepseek"
# github.com/deepseek-ai/DeepSeek-Math-V2: LICENSE is Apache-2.0, and outputs/README.md gives the
# IMO-ProofBench content as Apache-2.0 (Google DeepMind).
LICENCE = "Apache-2.0"
GENERATOR = "DeepSeekMath-V2"
INPUT_KEYS = ("id", "question", "question_original", "answer", "contest", "problem_idx")
OUTPUT_KEYS = (
    "question",
    "question_original",
    "problem_idx",
    "model_prediction",
    "solution",
    "grading guidelines",
    "level",
    "source",
    "type",
)
PROBLEM_IDX = re.compile(r"^([A-Za-z]+)(\d{4})-(\w+)$")
NATIVE_MAX = (("Putnam", 10), ("CMO", 21))


def human_max(problem_idx: str) -> int:
    for prefix, maximum in NATIVE_MAX:
        if problem_idx.startswith(prefix):
            return maximum
    return 7


def problem_fields(problem_idx: str) -> dict:
    if problem_idx.startswith("PB-"):
        return {"contest": "IMO-ProofBench", "number": problem_idx.rsplit("-", 1)[-1]}
    match = PROBLEM_IDX.match(problem_idx)
    if match:
        return {"contest": match.group(1), "year": int(match.group(2)), "number": match.group(3)}
    return {}


def alternative_statements(row: Row, statement: str, source: str) -> list[dict]:
    """`question_original` when it differs from the statement: the text before DeepSeekMath-V2
    corrected it."""
    original = row.text("question_original")
    if not original.strip() or original.strip() == statement.strip():
        return []
    return [{"source": source, "field": "question_original", "text": original}]


def read(path: Path, progress: Progress, name: str) -> Iterator[Item]:
    if path.suffix.lower() == ".json" and binary_kind(path) is None:
        yield from read_inputs(path, progress, name)
    else:
        yield from read_outputs(path, progress, name)


def read_inputs(path: Path, progress: Progress, name: str) -> Iterator[Item]:
    source = f"{NAME} {name}"
    entries = json_array_rows(
        path, progress, name, shape="A DeepSeekMath-V2 inputs file is a JSON list."
    )
    for index, (where, entry) in enumerate(entries, start=1):
        if isinstance(entry, Issue):
            yield entry
            continue
        if not isinstance(entry, dict):
            yield error(where, "The entry is not a JSON object.")
            continue
        if index == 1:
            unknown = unknown_columns(where, entry.keys(), INPUT_KEYS, NAME)
            if unknown:
                yield unknown
        issues: list[Issue] = []
        row = Row(where, entry, issues)
        problem_idx = row.key("problem_idx", required=True)
        statement = row.text("question", required=True)
        alternatives = alternative_statements(row, statement, source)
        answer = row.text("answer")
        contest = row.text("contest")
        if issues:
            yield from issues
            continue
        fields = problem_fields(problem_idx)
        if contest and "contest" not in fields:
            fields["contest"] = contest
        yield ProblemIn(
            where,
            problem_idx,
            statement=statement,
            final_answer="" if answer.strip().lower() in ("", "null", "none") else answer,
            source=source,
            metadata={"alternative_statements": alternatives} if alternatives else {},
            **fields,
        )


def read_outputs(path: Path, progress: Progress, name: str) -> Iterator[Item]:
    source = f"{NAME} {name}"
    for entry in object_rows(rows(path, progress, name), OUTPUT_KEYS, NAME):
        if isinstance(entry, Issue):
            yield entry
        else:
            yield from output_records(*entry, source)


def output_records(where: Where, data: dict, source: str) -> Iterator[Item]:
    issues: list[Issue] = []
    row = Row(where, data, issues)
    problem_idx = row.key("problem_idx", required=True)
    statement = row.text("question", required=True)
    alternatives = alternative_statements(row, statement, source)
    solution = row.text("solution")
    guidelines = row.text("grading guidelines")
    original = row.text("source")
    level = row.text("level")
    kind = row.text("type")
    prediction = row.mapping("model_prediction")
    inner = Row(where, prediction, issues)
    proof = inner.text("proof", think=True) if prediction else ""
    human = inner.number("model_prediction.human_rating", prediction.get("human_rating"))
    automatic = inner.number(
        "model_prediction.average_automatic_rating", prediction.get("average_automatic_rating")
    )
    maximum = human_max(problem_idx)
    if human is not None and not 0 <= human <= maximum:
        issues.append(
            error(where, f"{human} is outside 0-{maximum}.", "model_prediction.human_rating")
        )
    if automatic is not None and not 0 <= automatic <= 1:
        issues.append(
            error(
                where, f"{automatic} is outside 0-1.", "model_prediction.average_automatic_rating"
            )
        )
    if issues:
        yield from issues
        return
    metadata = {
        key: value for key, value in (("level", level), ("original_source", original)) if value
    }
    if kind:
        metadata["category"] = kind
    if alternatives:
        metadata["alternative_statements"] = alternatives
    yield ProblemIn(
        where,
        problem_idx,
        statement=statement,
        topic=topic_of(kind),
        source=source,
        metadata=metadata,
        primary=False,
        schemes=[{"format": "imobench_guidelines", "source": source, "content": guidelines}]
        if guidelines.strip()
        else [],
        **problem_fields(problem_idx),
    )
    if solution.strip():
        yield SolutionIn(where, problem_idx, solution, source=source)
    if proof.strip():
        ratings = []
        if human is not None:
            ratings.append(
                {"source": source, "kind": "expert", "value": human, "max": maximum, "raw": human}
            )
        if automatic is not None:
            ratings.append(
                {
                    "source": source,
                    "kind": "automatic",
                    "value": automatic,
                    "max": 1,
                    "raw": automatic,
                }
            )
        yield ProofIn(
            where,
            problem_idx,
            GENERATOR,
            "0",
            proof,
            sample_index=0,
            source=source,
            metadata={"imported_ratings": ratings} if ratings else {},
        )
