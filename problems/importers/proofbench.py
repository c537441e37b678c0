"""ProofBench rows (JSONL, CSV or Parquet): one row per (problem, generator, response).

Columns: problem_id, problem (both required), reference_solution, marking_scheme, generator,
model_solution, expert_rating (0-7), metadata {contest, contest_year}, response_number,
generation_prompt, and licence (Proofmark's exports add it: the licence of the source record;
a row with the column is Proofmark's own, so a blank cell means "not recorded" and the ProofBench
default is not applied). From Proofmark's exports it also reads `scheme_format` (the scheme's
format, default proofbench_markdown), `scheme_version` (the version number the scheme gets when
that number is free, and the one the rating was given under) and `sample_key` (the proof's
sample key, default `response_number`); their other columns (label_source, label_confidence,
judgements, campaign, item_id, split, statement_version, ...) are known and not read.
"""

import hashlib
import re
from collections.abc import Iterator
from pathlib import Path

from problems.importers.base import (
    SCHEME_FORMATS,
    Issue,
    Item,
    ProblemIn,
    Progress,
    ProofIn,
    Row,
    SolutionIn,
    Where,
    error,
    object_rows,
    rows,
)

NAME = "proofbench"
# ProofBench (Hugging Face wenjiema02/ProofBench): MIT. A row's own `licence` column (Proofmark's
# proofbench exports carry one) wins.
LICENCE = "MIT"
MAX_COLUMNS = ("expert_max", "rating_max", "max_rating")
COLUMNS = (
    "problem_id",
    "problem",
    "reference_solution",
    "marking_scheme",
    "generator",
    "model_solution",
    "expert_rating",
    "metadata",
    "response_number",
    "generation_prompt",
    "licence",
    "scheme_format",
    "scheme_version",
    "sample_key",
    "item_id",
    "label_source",
    "judgements",
    "campaign",
    "split",
    "route_rank",
    "route_uncertainty",
    "label_confidence",
    "statement_version",
    "native_rating",
    "native_scale",
    # how the export's item was chosen (exports' sampling design columns)
    "chosen_by",
    "inclusion_probability",
    "double_chosen_by",
    "double_probability",
    *MAX_COLUMNS,
)
UNKNOWN_GENERATOR = "unknown"
# An expert column beside (or instead of) expert_rating: each is one expert's rating (one rater
# each), out of the row's `expert_max` (default 7: ProofBench's scale).
EXPERT_COLUMN = re.compile(r"^(?:(?:expert|human)_(?:rating|score|grade)s?(?:_\w+)?|expert_\d+)$")
# the known columns that are no expert's (a row's usual columns): passed without the pattern
NOT_EXPERT = frozenset(COLUMNS) - {"expert_rating"}


def read(path: Path, progress: Progress, name: str) -> Iterator[Item]:
    source = f"{NAME} {name}"
    for entry in object_rows(rows(path, progress, name), COLUMNS, NAME, EXPERT_COLUMN):
        if isinstance(entry, Issue):
            yield entry
        else:
            yield from row_records(*entry, source)


def row_records(where: Where, data: dict, source: str) -> Iterator[Item]:
    issues: list[Issue] = []
    row = Row(where, data, issues)
    problem_id = row.key("problem_id", required=True)
    statement = row.text("problem", required=True)
    meta = row.mapping("metadata")
    year = row.integer("metadata.contest_year", meta.get("contest_year"))
    solution = row.text("reference_solution")
    scheme = row.text("marking_scheme")
    model_solution = row.text("model_solution", think=True)
    generator = row.key("generator", default=UNKNOWN_GENERATOR)
    response = row.integer("response_number")
    maximum = next(
        (value for column in MAX_COLUMNS if (value := row.number(column)) is not None), 7
    )
    columns = [
        column for column in data if column not in NOT_EXPERT and EXPERT_COLUMN.match(str(column))
    ]
    experts = [
        (column, value, maximum)
        for column in sorted(columns, key=lambda column: (column != "expert_rating", column))
        if (value := row.number(column)) is not None
    ]
    native = native_rating(row)
    if native is not None and experts and experts[0][0] == "expert_rating":
        # Proofmark's own export of a campaign on a wider scale: expert_rating is its label
        # brought onto 0-7, native_rating the label itself, out of native_scale's top
        experts[0] = ("expert_rating", *native)
    prompt = row.text("generation_prompt")
    licence = row.text("licence").strip()
    scheme_format = row.key("scheme_format", default="proofbench_markdown")
    scheme_version = row.integer("scheme_version")
    sample_key = row.key("sample_key")
    if maximum <= 0:
        issues.append(error(where, f"{maximum} is no maximum.", "expert_max"))
    for column, value, top in experts:
        if not 0 <= value <= top:
            issues.append(error(where, f"{value} is outside 0-{top}.", column))
    if scheme_format not in SCHEME_FORMATS or scheme_format == "matharena_json":
        text_formats = ", ".join(f for f in SCHEME_FORMATS if f != "matharena_json")
        issues.append(
            error(where, f"{scheme_format!r} is not one of {text_formats}.", "scheme_format")
        )
    if scheme_version is not None and scheme_version < 1:
        issues.append(error(where, f"{scheme_version} is not a version number.", "scheme_version"))
    if issues:
        yield from issues
        return
    contest = meta.get("contest")
    own = {"licence": licence} if "licence" in data else {}  # blank: not recorded
    yield ProblemIn(
        where,
        problem_id,
        statement=statement,
        contest=contest if isinstance(contest, str) else "",
        year=year,
        source=source,
        metadata=dict(own),
        primary=False,
        schemes=[
            {
                "format": scheme_format,
                "source": source,
                "content": scheme,
                **({"version": scheme_version} if scheme_version is not None else {}),
            }
        ]
        if scheme.strip()
        else [],
    )
    if solution.strip():
        yield SolutionIn(where, problem_id, solution, source=source)
    if model_solution.strip():
        metadata: dict = dict(own)
        if experts:
            graded_under = (
                {"scheme": {"version": scheme_version, "text_sha256": text_sha256(scheme)}}
                if scheme.strip()
                else {}
            )
            metadata["imported_ratings"] = [
                {
                    "source": source,
                    "kind": "expert",
                    "value": value,
                    "max": top,
                    "raw": value,
                    **({"column": column} if column != "expert_rating" else {}),
                    **graded_under,
                }
                for column, value, top in experts
            ]
        if prompt:
            metadata["generation_prompt"] = prompt
        yield ProofIn(
            where,
            problem_id,
            generator,
            sample_key or (str(response) if response is not None else "0"),
            model_solution,
            sample_index=response,
            source=source,
            metadata=metadata,
        )


def native_rating(row: Row):
    """(value, maximum) of a row's native_rating on its native_scale "0-N" (what Proofmark's
    ProofBench export of a 0-N campaign writes beside expert_rating), else None."""
    value = row.number("native_rating")
    if value is None:  # the common row: not Proofmark's export of a 0-N campaign
        return None
    match = re.fullmatch(r"0-(\d{1,3})", row.text("native_scale").strip())
    if match is None or int(match.group(1)) <= 0:
        return None
    return value, int(match.group(1))


def text_sha256(text: str) -> str:
    """The hash an imported rating keeps of the scheme text it was given under: the
    materialised judgement is pinned to the problem's version with that text."""
    return hashlib.sha256(text.encode()).hexdigest()
