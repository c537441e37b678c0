"""A MathArena competition folder: problems/N.tex, solutions/N.tex, grading_scheme.json
(list of {id, points, scheme: [{title, points, desc}]}) and config.yaml.

The folder's name gives the contest and year (`usamo_2025`, `matharena_usamo2025` ->
`USAMO-2025-P1`...); `sample_grading/` holds example judge outputs and is not imported.
"""

import re
from collections.abc import Iterator
from pathlib import Path

from problems.importers.base import (
    Item,
    ProblemIn,
    Progress,
    SolutionIn,
    SourceError,
    Where,
    error,
    read_json,
    read_text,
    unstorable_fields,
    warning,
    yaml_load,
)

NAME = "matharena"
# github.com/eth-sri/matharena, whose data/ folders this layout is: MIT (its Hugging Face copies
# are CC-BY-NC-SA-4.0; import those with an explicit licence).
LICENCE = "MIT"
FOLDER_NAME = re.compile(r"(?:matharena[_-])?([a-z]+?)[_-]?(\d{4})$", re.IGNORECASE)


def looks_like(path: Path) -> bool:
    return (
        path.is_dir() and (path / "problems").is_dir() and (path / "grading_scheme.json").is_file()
    )


def contest_of(folder: Path) -> tuple[str, int | None, str]:
    """(contest, year, external id prefix) from the folder name."""
    match = FOLDER_NAME.search(folder.name)
    if match:
        contest, year = match.group(1).upper(), int(match.group(2))
        return contest, year, f"{contest}-{year}"
    return folder.name, None, folder.name


def read(path: Path, progress: Progress, name: str) -> Iterator[Item]:
    if not looks_like(path):
        raise SourceError(
            Where(name), "Not a MathArena folder: it needs problems/N.tex and grading_scheme.json."
        )
    contest, year, prefix = contest_of(path)
    scheme_name = f"{name}/grading_scheme.json"
    schemes = read_json(path / "grading_scheme.json", progress, scheme_name)
    if not isinstance(schemes, list):
        raise SourceError(Where(scheme_name), "grading_scheme.json must be a JSON list.")
    by_id: dict[str, object] = {}
    refused: set[str] = set()  # problems whose scheme entry holds what cannot be stored
    for index, entry in enumerate(schemes):
        if not isinstance(entry, dict) or "id" not in entry:
            yield error(Where(scheme_name), f"entry {index + 1} has no 'id'.", "id")
            continue
        bad = list(unstorable_fields(entry, f"[{index}]"))
        for field, words in bad:
            yield error(Where(scheme_name), words, field)
        if bad:
            refused.add(str(entry["id"]))
            continue
        by_id[str(entry["id"])] = entry.get("scheme", entry)
    config: dict = {}
    if (path / "config.yaml").is_file():
        config_name = f"{name}/config.yaml"
        import yaml  # loaded for a YAML file only (problems.importers.base.yaml_load)

        try:
            config = yaml_load(read_text(path / "config.yaml", progress, config_name)) or {}
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            line = mark.line + 1 if mark else None
            yield error(Where(config_name, line), f"Not valid YAML: {exc}")
        if bad := next(unstorable_fields(config), None):  # every problem would carry it
            raise SourceError(Where(config_name), bad[1], bad[0])
    numbers = sorted(
        (file.stem for file in (path / "problems").glob("*.tex")),
        key=lambda stem: (not stem.isdigit(), int(stem) if stem.isdigit() else 0, stem),
    )
    if not numbers:
        raise SourceError(Where(f"{name}/problems"), "No problems/N.tex files.")
    source = f"{NAME} {name}"
    metadata = {key: config[key] for key in ("date", "n_problems", "final_answer") if key in config}
    for number in numbers:
        statement_name = f"{name}/problems/{number}.tex"
        try:
            statement = read_text(path / "problems" / f"{number}.tex", progress, statement_name)
        except SourceError as exc:  # this problem fails alone
            yield exc.issue
            continue
        if number in refused:
            continue
        external_id = f"{prefix}-P{number}"
        scheme = by_id.get(number)
        if scheme is None:
            yield warning(Where(scheme_name), f"no grading scheme for problem {number}.", "id")
        yield ProblemIn(
            Where(statement_name, 1),
            external_id,
            statement=statement.strip(),
            contest=contest,
            year=year,
            number=number,
            source=source,
            metadata=dict(metadata),
            schemes=[
                {
                    "format": "matharena_json",
                    "source": f"{NAME} grading_scheme.json",
                    "content": scheme,
                }
            ]
            if scheme is not None
            else [],
        )
        solution_file = path / "solutions" / f"{number}.tex"
        if solution_file.is_file():
            solution_name = f"{name}/solutions/{number}.tex"
            try:
                text = read_text(solution_file, progress, solution_name).strip()
            except SourceError as exc:  # the solution fails alone
                yield exc.issue
                continue
            if text:
                yield SolutionIn(Where(solution_name, 1), external_id, text, source=source)
