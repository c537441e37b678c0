"""IMO-ProofBench CSV (google-deepmind/superhuman imobench/proofbench_v2.csv): problems with a
reference solution and grading guidelines ((Partial)/(Almost) items)."""

from collections.abc import Iterator
from pathlib import Path

from problems.importers.base import (
    Issue,
    Item,
    ProblemIn,
    Progress,
    Row,
    SolutionIn,
    Where,
    rows,
    topic_of,
    unknown_columns,
)

NAME = "imobench"
# google-deepmind/superhuman imobench/README.md: materials CC-BY-4.0 (software Apache-2.0).
LICENCE = "CC-BY-4.0"
CONTEST = "IMO-ProofBench"
COLUMNS = (
    "Problem ID",
    "Problem",
    "Solution",
    "Grading guidelines",
    "Category",
    "Level",
    "Short Answer",
    "Source",
)


def read(path: Path, progress: Progress, name: str) -> Iterator[Item]:
    source = f"{NAME} {name}"
    checked_columns = False
    for where, data in rows(path, progress, name):
        if isinstance(data, Issue):
            yield data
            continue
        if not checked_columns:
            checked_columns = True
            unknown = unknown_columns(Where(name, 1), data.keys(), COLUMNS, NAME)
            if unknown:
                yield unknown
        yield from row_records(where, data, source)


def row_records(where: Where, data: dict, source: str) -> Iterator[Item]:
    issues: list[Issue] = []
    row = Row(where, data, issues)
    problem_id = row.key("Problem ID", required=True)
    statement = row.text("Problem", required=True)
    solution = row.text("Solution")
    guidelines = row.text("Grading guidelines")
    category = row.text("Category")
    level = row.text("Level")
    answer = row.text("Short Answer")
    original = row.text("Source")
    if issues:
        yield from issues
        return
    metadata = {
        key: value for key, value in (("level", level), ("original_source", original)) if value
    }
    if category:
        metadata["category"] = category
    yield ProblemIn(
        where,
        problem_id,
        statement=statement,
        contest=CONTEST,
        number=problem_id.rsplit("-", 1)[-1] if "-" in problem_id else "",
        topic=topic_of(category),
        final_answer=answer,
        source=source,
        metadata=metadata,
        schemes=[{"format": "imobench_guidelines", "source": source, "content": guidelines}]
        if guidelines.strip()
        else [],
    )
    if solution.strip():
        yield SolutionIn(where, problem_id, solution, source=source)
