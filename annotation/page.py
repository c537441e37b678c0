"""What the grading page shows, built from a GradingView (no queries): the scheme as checklist
rows, the scale's options and definitions, the proof's steps, and the draft state for the
page's script."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache

from django.template.loader import render_to_string
from django.utils.safestring import SafeString, mark_safe

from annotation import scales
from annotation.models import AssignmentStatus, Grade, Scale
from annotation.selectors import GradingView
from annotation.services.grade_checks import grade_snapshot, not_graded_reason
from annotation.spans import split_steps
from problems.rendering import preview_text
from rubrics.structure import AwardError, Checkpoint, Scheme, format_points, score_breakdown


@dataclass
class Row:
    """One line of the checklist: a leaf to award, or a group heading."""

    id: str
    title: str
    description: str
    points: str
    depth: int
    levels: list[str]
    is_group: bool
    rule: str
    key: str = ""  # the key that gives the checkpoint its full points
    full_marks: bool = False  # given full points by the "all full marks" key


# The checkpoints' keys, in order (letters the grading page uses for nothing else).
CHECKPOINT_KEYS = "asdfqwruilyzb"
ALL_FULL_MARKS_KEY = "="


def _rows(items: list[Checkpoint], depth: int) -> list[Row]:
    rows: list[Row] = []
    for cp in items:
        rule = ""
        if cp.children:
            rule = {
                "larger": "award the larger only",
                "max": f"at most {format_points(cp.cap or cp.points)}",
            }.get(cp.rule.value, "additive")
        rows.append(
            Row(
                id=cp.id,
                title=cp.title,
                description=cp.description,
                points=format_points(cp.points),
                depth=depth,
                levels=[] if cp.children else [format_points(v) for v in cp.award_levels()],
                is_group=bool(cp.children),
                rule=rule,
            )
        )
        rows.extend(_rows(cp.children, depth + 1))
    return rows


def band_choices(scheme: Scheme) -> list[dict]:
    """A band scheme's bands for the picker, highest first, each with its key: its points as a
    digit when no other band gives the same."""
    counts: dict[str, int] = {}
    for band in scheme.bands:
        counts[format_points(band.points)] = counts.get(format_points(band.points), 0) + 1
    choices = []
    for band in sorted(scheme.bands, key=lambda b: -b.points):
        points = format_points(band.points)
        choices.append(
            {
                "id": band.id,
                "name": band.name,
                "points": points,
                "key": points if counts[points] == 1 and len(points) == 1 else "",
                "description": band.description,
                "lines": band.lines,
            }
        )
    return choices


def _assign_keys(chains: list[dict]) -> None:
    """A key per leaf checkpoint, in order, while keys last; "all full marks" covers the shared
    prerequisites and the first approach (the chains are alternatives: the best one counts)."""
    leaves = [row for chain in chains for row in chain["rows"] if not row.is_group]
    for row, key in zip(leaves, CHECKPOINT_KEYS, strict=False):
        row.key = key
    first = next((chain for chain in chains if not chain["shared"]), None)
    for chain in chains:
        if chain["shared"] or chain is first:
            for row in chain["rows"]:
                row.full_marks = not row.is_group


def checklist(scheme: Scheme) -> dict:
    chains = []
    for chain in scheme.all_chains():
        if chain is scheme.shared:
            title = (
                f"Shared prerequisites: {chain.title}" if chain.title else "Shared prerequisites"
            )
        elif chain.title and not chain.title.lower().startswith("chain"):
            title = f"Chain {chain.id}: {chain.title}"  # experts refer to chains by letter
        else:
            title = chain.title or f"Chain {chain.id}"
        chains.append(
            {
                "id": chain.id,
                "title": title,
                "shared": chain is scheme.shared,
                "max": format_points(chain.max_value()),
                "rows": _rows(chain.items, 0),
            }
        )
    _assign_keys(chains)
    return {
        "chains": chains,
        "all_full_marks_key": ALL_FULL_MARKS_KEY,
        "zero_credit": [{"id": z.id, "text": z.text} for z in scheme.zero_credit],
        "deductions": [{"id": d.id, "text": d.text, "label": d.label} for d in scheme.deductions],
        "round_down": scheme.round_down,
    }


def _key_for(value: Decimal, scale: str) -> str:
    if scale == Scale.TERNARY and value == Decimal("0.5"):
        return "h"
    return format_points(value)


def scale_options(scale: str) -> list[dict]:
    spec = scales.scale_spec(scale)
    return [
        {
            "value": format_points(value),
            "key": _key_for(value, scale),
            "label": spec.labels.get(value, ""),
        }
        for value in reversed(spec.values)
    ]


WIDE_SCALE = 8  # more choices than 0-7's: shown as a row of numbers, typed as numbers


@lru_cache(maxsize=64)
def scale_parts(scale: str, editable: bool) -> dict[str, SafeString]:
    """The scoring pane's parts that depend on nothing but the scale and whether the page takes
    input (the definitions, the final score's choices, the keys), rendered once per process:
    their loops were a fifth of the grading page's CPU on every load."""
    options = scale_options(scale)
    context = {"scale_options": options, "editable": editable}
    if len(options) > WIDE_SCALE:
        # a range such as 0-21: a row of numbers, typed as numbers (two digits in quick
        # succession: 1 then 5 is 15), the definitions of its ends and its map onto 0-7
        context |= {
            "wide": True,
            "ends": [options[0], options[-1]],
            "to_0_7": scales.conversions(scale)["to_0_7"],
            "low": options[-1]["value"],
            "high": options[0]["value"],
        }
    return {
        part: mark_safe(render_to_string(f"annotation/_scale_{part}.html", context).strip())
        for part in ("defs", "final", "keys")
    }


def initial_state(grade: Grade | None) -> dict:
    if grade is None:
        return {
            "score": None,
            "awards": {},
            "deductions": [],
            "via_equivalent": [],
            "score_note": "",
            "comment": "",
            "step_verdicts": {},
            "first_wrong_step": None,
            "spans": [],
            "seconds_spent": 0,
            "status": "none",
        }
    state = grade_snapshot(grade)
    state["seconds_spent"] = grade.seconds_spent
    state["status"] = grade.status
    return state


def running_total(scheme: Scheme, state: dict) -> str | None:
    """The checklist's computed score for the state's awards and deductions (0 before any is
    chosen), shown beside the checklist without saving anything; None if they do not fit."""
    try:
        return format_points(score_breakdown(scheme, state["awards"], state["deductions"]).score)
    except AwardError:
        return None


# What a draft holds besides bookkeeping (time, status, what is derived from the rest).
_DERIVED = {"seconds_spent", "status", "computed_score", "derived_rating", "derived_reason"}


def draft_restored(grade: Grade | None, state: dict) -> bool:
    """Whether the page restores a draft: the expert's grade is a draft holding something."""
    if grade is None or grade.is_submitted:
        return False
    return any(
        value not in (None, "", [], {}) for key, value in state.items() if key not in _DERIVED
    )


@lru_cache(maxsize=256)
def _steps_cached(text: str) -> tuple[dict, ...]:
    return tuple(
        {"number": s.number, "start": s.start, "end": s.end, "preview": preview_text(s.text, 90)}
        for s in split_steps(text)
    )


def proof_steps(text: str) -> list[dict]:
    """The proof's paragraphs with a one-line preview each (the page's script lists them)."""
    return list(_steps_cached(text))


def page_texts(view: GradingView) -> list[str]:
    """The long Markdown texts the grading page shows, to render (or read rendered) at once
    (problems.rendering.texts_rendered) before its template does."""
    item = view.item
    return [
        item.proof.statement_text,
        item.proof.text,
        *(solution.text for solution in view.solutions),
        item.scheme.text if item.scheme_id else "",
        item.campaign.guidelines,
    ]


def grading_page_context(view: GradingView) -> dict:
    item = view.item
    campaign = item.campaign
    scheme = None
    if item.scheme_id and item.scheme.structure:
        scheme = Scheme.from_dict(item.scheme.structure)
    uses_checklist = (
        scheme is not None and not scheme.is_empty and campaign.scale == Scale.ZERO_TO_SEVEN
    )
    steps = proof_steps(item.proof.text)
    grade = view.grade
    editable = (
        view.assignment is not None
        and campaign.is_open
        and (not item.is_final or item.is_gold)
        and view.assignment.status != AssignmentStatus.RELEASED
    )
    state = initial_state(grade)
    if uses_checklist:
        state["computed_score"] = running_total(scheme, state)
    return {
        "item": item,
        "campaign": campaign,
        "problem": item.proof.problem,
        "proof": item.proof,
        "scheme_row": item.scheme,
        "bands": band_choices(scheme) if uses_checklist and scheme.bands else None,
        "checklist": checklist(scheme) if uses_checklist and not scheme.bands else None,
        "scheme_moved": grade is not None
        and not grade.is_submitted
        and grade.scheme_id is not None
        and grade.scheme_id != item.scheme_id,
        "scale_is_ternary": campaign.scale == Scale.TERNARY,
        "citation_rule": scales.CITATION_RULE,
        "steps": steps,
        "grade": grade,
        "submitted": grade is not None and grade.is_submitted,
        "editable": editable,
        "solutions": view.solutions,
        "others": view.others,
        "taxonomy": campaign.error_taxonomy,
        "state": state,
        "restored": draft_restored(grade, state),
        "not_graded": not_graded_reason(checklist=uses_checklist),
    }
