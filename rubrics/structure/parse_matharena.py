"""MathArena `grading_scheme.json` -> Scheme.

The file is a list of problems `{"id": "1", "points": 7, "scheme": [{title, points, desc}]}`;
one problem's entry, or its `scheme` list alone, becomes a scheme with one chain whose
checkpoints are the list items in order ("c1", "c2", ...). MathArena's judges award whole
points within an item, so leaves take integer partial credit.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from .model import Chain, Checkpoint, Partial, Scheme, format_points, to_decimal
from .validate import Message, error, validate, warning


def parse_matharena(
    data: str | Mapping | Sequence, problem_id: str | None = None
) -> tuple[Scheme | None, list[Message]]:
    """data: the JSON text or value of a whole file (then `problem_id` picks the problem), one
    problem's entry, or its list of {title, points, desc} items."""
    if isinstance(data, str):
        try:
            data = json.loads(data)
        except json.JSONDecodeError as exc:
            return None, [error(f"Not valid JSON: {exc.msg} (line {exc.lineno}).", line=exc.lineno)]
    entry, problems = _entry(data, problem_id)
    if entry is None:
        return None, problems
    items = entry.get("scheme") if isinstance(entry, Mapping) else entry
    if not isinstance(items, list) or not items:
        return None, [error("The grading scheme lists no items.")]
    checkpoints = []
    for index, item in enumerate(items, start=1):
        where = f"item {index}"
        if not isinstance(item, Mapping):
            return None, [error(f"Grading scheme {where} is not an object.", where)]
        missing = [key for key in ("title", "points") if key not in item]
        if missing:
            return None, [error(f"Grading scheme {where} has no {' or '.join(missing)}.", where)]
        try:
            points = to_decimal(item["points"])
        except ValueError:
            return None, [error(f"Grading scheme {where} has points {item['points']!r}.", where)]
        checkpoints.append(
            Checkpoint(
                id=f"c{index}",
                title=str(item["title"]).strip(),
                points=points,
                description=str(item.get("desc", "")).strip(),
                partial=Partial.INTEGER,
            )
        )
    scheme = Scheme(chains=[Chain(id="A", items=checkpoints)])
    messages = validate(scheme)
    if isinstance(entry, Mapping) and "points" in entry:
        declared = to_decimal(entry["points"])
        total = scheme.chains[0].max_value()
        if declared != total:
            messages.append(
                warning(
                    f"The problem declares {format_points(declared)} points but its items add up "
                    f"to {format_points(total)}."
                )
            )
    return scheme, messages


def _entry(data: object, problem_id: str | None) -> tuple[object | None, list[Message]]:
    if isinstance(data, Mapping):
        return data, []
    if not isinstance(data, list):
        return None, [error("Expected a list of problems or of grading-scheme items.")]
    is_file = bool(data) and all(isinstance(e, Mapping) and "scheme" in e for e in data)
    if not is_file:
        return data, []
    if problem_id is None:
        if len(data) == 1:
            return data[0], []
        return None, [error("The file holds several problems: say which problem id to read.")]
    for entry in data:
        if str(entry.get("id")) == str(problem_id):
            return entry, []
    known = ", ".join(str(e.get("id")) for e in data)
    return None, [error(f"No problem with id {problem_id} in the file (it has {known}).")]
