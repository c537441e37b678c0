"""IMO-GradingBench (google-deepmind/superhuman imobench/gradingbench.csv): expert gradings of
model proofs of IMO-ProofBench problems, one a row (CSV, or the same columns as JSON Lines,
Parquet or Arrow).

Columns: `Grading ID`, `Problem ID`, `Problem`, `Solution`, `Grading guidelines`, `Response`,
`Points` (0-7), `Reward` (the grade's word: Correct, Almost, Partial, Incorrect) and
`Problem Source`. Each row gives its problem (with the guidelines as an `imobench_guidelines`
scheme and the reference solution) and one proof, whose sample key is the grading id and whose
generator is not named by the dataset ("unknown"); the points become an expert rating out of 7
with the reward word kept beside it (`label`), and with the hash of the guidelines it was given
under, so that the rating's judgement is pinned to that scheme version. A row with a reward
but no points gets the points the word stands for (`REWARD_POINTS`).
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
    error,
    object_rows,
    rows,
    topic_of,
)
from problems.importers.proofbench import UNKNOWN_GENERATOR, text_sha256

NAME = "gradingbench"
# google-deepmind/superhuman imobench/README.md: materials CC-BY-4.0 (software Apache-2.0).
LICENCE = "CC-BY-4.0"
CONTEST = "IMO-ProofBench"
COLUMNS = (
    "Grading ID",
    "Problem ID",
    "Problem",
    "Solution",
    "Grading guidelines",
    "Response",
    "Points",
    "Reward",
    "Problem Source",
    "Category",
    "Level",
)
MAX_POINTS = 7
# IMO-ProofBench's four grades (the paper's 7 / 6 / 1 / 0), by the words the dataset uses
REWARD_POINTS = {
    "correct": 7,
    "high": 7,
    "almost": 6,
    "medium": 6,
    "partial": 1,
    "low": 1,
    "incorrect": 0,
}


def read(path: Path, progress: Progress, name: str) -> Iterator[Item]:
    source = f"{NAME} {name}"
    for entry in object_rows(rows(path, progress, name), COLUMNS, NAME):
        if isinstance(entry, Issue):
            yield entry
        else:
            yield from row_records(*entry, source)


def row_records(where: Where, data: dict, source: str) -> Iterator[Item]:
    issues: list[Issue] = []
    row = Row(where, data, issues)
    grading_id = row.key("Grading ID", required=True)
    problem_id = row.key("Problem ID", required=True)
    statement = row.text("Problem", required=True)
    solution = row.text("Solution")
    guidelines = row.text("Grading guidelines")
    response = row.text("Response", required=True, think=True)
    points = row.number("Points")
    reward = row.text("Reward").strip()
    original = row.text("Problem Source").strip()
    category = row.text("Category").strip()
    if reward and reward.lower() not in REWARD_POINTS:
        issues.append(
            error(
                where,
                f"{reward!r} is not one of Correct, Almost, Partial, Incorrect.",
                "Reward",
            )
        )
    if points is None and reward.lower() in REWARD_POINTS:
        points = REWARD_POINTS[reward.lower()]
    if points is None:
        issues.append(error(where, "missing (required: Points or Reward).", "Points"))
    elif not 0 <= points <= MAX_POINTS:
        issues.append(error(where, f"{points} is outside 0-{MAX_POINTS}.", "Points"))
    if issues:
        yield from issues
        return
    metadata = {"original_source": original} if original else {}
    if category:
        metadata["category"] = category
    yield ProblemIn(
        where,
        problem_id,
        statement=statement,
        contest=CONTEST,
        number=problem_id.rsplit("-", 1)[-1] if "-" in problem_id else "",
        topic=topic_of(category),
        source=source,
        metadata=metadata,
        schemes=[{"format": "imobench_guidelines", "source": source, "content": guidelines}]
        if guidelines.strip()
        else [],
        primary=False,
    )
    if solution.strip():
        yield SolutionIn(where, problem_id, solution, source=source)
    rating = {
        "source": source,
        "kind": "expert",
        "value": points,
        "max": MAX_POINTS,
        "raw": {"points": data.get("Points"), "reward": reward} if reward else points,
    }
    if reward:
        rating["label"] = reward
    if guidelines.strip():
        rating["scheme"] = {"version": None, "text_sha256": text_sha256(guidelines)}
    yield ProofIn(
        where,
        problem_id,
        UNKNOWN_GENERATOR,
        grading_id,
        response,
        source=source,
        metadata={"imported_ratings": [rating], "grading_id": grading_id},
    )
