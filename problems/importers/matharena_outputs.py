"""MathArena's per-answer grading records (Hugging Face `MathArena/<competition>_outputs`, e.g.
usamo_2025_outputs: Parquet, or the same rows as JSON Lines or Arrow): one model answer a row
with each human judge's points and comments.

Columns read: `problem_idx`, `problem`, `model_name` (the generator), `idx_answer` (the sample),
`answer` (the proof), and for each judge N `points_judge_N`, `max_points_judge_N` and
`grading_details_judge_N` (a list of {title, points, max_points, desc}: the judge's comment on
each part of the scheme) and `error_judge_N`. Each judge's points become an expert rating out
of its own maximum, with the details kept beside the score (`details`) and written out as the
rating's comment (`comment`), which the imported judgement carries. A judge with an error and
no points gives no rating (a warning names the row).

The rows do not name their competition: it comes from the file's or a folder's name
(`usamo_2025_outputs/...` -> `USAMO-2025-P1`, as for a competition folder), else from a
`competition` column; a file with neither is refused, saying so.
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
    SourceError,
    Where,
    clean_json,
    error,
    object_rows,
    rows,
    warning,
)
from problems.importers.matharena import FOLDER_NAME

NAME = "matharena_outputs"
# github.com/eth-sri/matharena is MIT; its Hugging Face output sets are CC-BY-NC-SA-4.0.
LICENCE = "CC-BY-NC-SA-4.0"
JUDGE_COLUMN = re.compile(r"^(points|max_points|grading_details|error)_judge_(\d+)$")
COLUMNS = (
    "problem_idx",
    "problem",
    "model_name",
    "model_config",
    "idx_answer",
    "answer",
    "user_message",
    "all_messages",
    "input_tokens",
    "output_tokens",
    "cost",
    "input_cost_per_tokens",
    "output_cost_per_tokens",
    "source",
    "history",
    "competition",
    "gold_answer",
    "points",
)
DEFAULT_MAX = 7


def competition_of(name: str) -> tuple[str, int | None, str] | None:
    """(contest, year, external id prefix) from the parts of a file's name, nearest first."""
    for part in reversed(Path(name).parts):
        stem = re.sub(r"(\.[a-z]+)+$", "", part, flags=re.IGNORECASE)
        stem = re.sub(r"[_-]outputs?$", "", stem, flags=re.IGNORECASE)
        match = FOLDER_NAME.search(stem)
        if match:
            contest, year = match.group(1).upper(), int(match.group(2))
            return contest, year, f"{contest}-{year}"
    return None


def read(path: Path, progress: Progress, name: str) -> Iterator[Item]:
    source = f"{NAME} {name}"
    named = competition_of(name)
    for entry in object_rows(rows(path, progress, name), COLUMNS, NAME, JUDGE_COLUMN):
        if isinstance(entry, Issue):
            yield entry
            continue
        where, data = entry
        competition = named or competition_of(str(data.get("competition") or ""))
        if competition is None:
            raise SourceError(
                Where(name),
                "Cannot tell the competition of these MathArena outputs: name the file or its "
                "folder after it (usamo_2025_outputs.parquet) or add a 'competition' column.",
            )
        yield from row_records(where, data, source, competition)


def judges(data: dict) -> list[int]:
    return sorted(
        {
            int(found.group(2))
            for key in data
            if (found := JUDGE_COLUMN.match(str(key))) and found.group(1) == "points"
        }
    )


def comment_of(details: object) -> str:
    """A judge's grading details in words: one line per part of the scheme."""
    if not isinstance(details, list):
        return str(details or "")
    lines = []
    for part in details:
        if not isinstance(part, dict):
            continue
        title = str(part.get("title") or "").strip()
        points, most = part.get("points"), part.get("max_points")
        score = f" ({points}/{most})" if most is not None else f" ({points})"
        desc = str(part.get("desc") or "").strip()
        lines.append(f"{title}{score if points is not None else ''}: {desc}".strip(": "))
    return "\n".join(lines)


def row_records(
    where: Where, data: dict, source: str, competition: tuple[str, int | None, str]
) -> Iterator[Item]:
    contest, year, prefix = competition
    issues: list[Issue] = []
    row = Row(where, data, issues)
    number = row.key("problem_idx", required=True)
    statement = row.text("problem", required=True)
    generator = row.key("model_name", required=True)
    sample = row.integer("idx_answer")
    answer = row.text("answer", required=True, think=True)
    ratings, notes = [], []
    for judge in judges(data):
        points = row.number(f"points_judge_{judge}")
        most = row.number(f"max_points_judge_{judge}")
        most = most if most else DEFAULT_MAX
        failed = data.get(f"error_judge_{judge}")
        if points is None:
            if failed:
                notes.append(warning(where, f"judge {judge} has an error and no points: {failed}"))
            continue
        if not 0 <= points <= most:
            issues.append(error(where, f"{points} is outside 0-{most}.", f"points_judge_{judge}"))
            continue
        details = data.get(f"grading_details_judge_{judge}")
        rating = {
            "source": source,
            "kind": "expert",
            "value": points,
            "max": most,
            "raw": points,
            "rater": judge,
            "comment": comment_of(details),
        }
        if details:
            rating["details"] = clean_json(details)
        ratings.append(rating)
    if issues:
        yield from issues
        return
    yield from notes
    external_id = f"{prefix}-P{number}"
    yield ProblemIn(
        where,
        external_id,
        statement=statement,
        contest=contest,
        year=year,
        number=number,
        source=source,
        primary=False,
    )
    metadata: dict = {"imported_ratings": ratings} if ratings else {}
    if config := row.text("model_config").strip():
        metadata["model_config"] = config
    yield ProofIn(
        where,
        external_id,
        generator,
        str(sample) if sample is not None else "0",
        answer,
        sample_index=sample,
        source=source,
        metadata=metadata,
    )
