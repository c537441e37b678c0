"""What a judgement says and whether it holds: the grade's input (score, awards, deductions,
spans, step verdicts), the rules an item imposes on it (scale, scheme, taxonomy), the check that
computes the score and refuses what is wrong, and the conflicts a stale or different write meets.
The writes that use them are in annotation/services/grading.py."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from decimal import Decimal, InvalidOperation

from annotation import scales
from annotation.models import (
    Grade,
    Item,
    Scale,
)
from annotation.spans import SpanError, locate_span
from annotation.steps import steps_check
from rubrics.structure import AwardError, Scheme, check_awards, compute_score

# What a submission with nothing chosen is refused with (the grading page says the same).
NOT_GRADED = "Not graded yet: choose the final score (0 counts) before submitting."
NOT_GRADED_CHECKLIST = (
    "Not graded yet: give a checkpoint its points, tick a deduction or choose the final score "
    "(0 counts) before submitting."
)


class GradeError(Exception):
    """A grade that cannot be saved; `problems` lists what is wrong, in words."""

    def __init__(self, problems: list[str] | str):
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        super().__init__("; ".join(self.problems))


@dataclass(frozen=True)
class Origin:
    """Where a write comes from: the page load that sends it (`page`) and the browser it runs
    in (`browser`), as the page names them, and a digest of the session or token it came with
    (`session`, set by the server). Stored with every version of a grade, so that a conflict
    names its real cause. Empty for writes without a request (imports, demo data)."""

    page: str = ""
    browser: str = ""
    session: str = ""

    @classmethod
    def of(cls, grade: Grade) -> Origin:
        return cls(grade.origin_page, grade.origin_browser, grade.origin_session)

    def stamp(self, grade: Grade) -> None:
        grade.origin_page, grade.origin_browser, grade.origin_session = (
            self.page[:64],
            self.browser[:64],
            self.session[:64],
        )


NO_ORIGIN = Origin()  # a write without a request (imports, demo data, benchmarks)


class Cause:
    """Who wrote the stored version a write conflicts with, from their origins."""

    THIS_PAGE = "this_page"  # the same page load (or the same API client, which names no page)
    ANOTHER_TAB = "another_tab"  # the same browser or session, another page load
    ANOTHER_DEVICE = "another_device"  # another browser, device or API client
    UNKNOWN = "unknown"  # written before origins were kept, or without a request

    WHERE = {
        THIS_PAGE: "from this page",
        ANOTHER_TAB: "in another tab",
        ANOTHER_DEVICE: "on another device",
        UNKNOWN: "in another tab or on another device",
    }


def conflict_cause(stored: Origin, origin: Origin) -> str:
    """Who wrote `stored` as seen from the write `origin`."""
    if not (stored.page or stored.browser or stored.session):
        return Cause.UNKNOWN
    if stored.page and stored.page == origin.page:
        return Cause.THIS_PAGE
    if not stored.page and not origin.page and stored.session == origin.session:
        return Cause.THIS_PAGE  # an API client's earlier request, with the same credentials
    if (stored.browser and stored.browser == origin.browser) or (
        stored.session and stored.session == origin.session
    ):
        return Cause.ANOTHER_TAB
    return Cause.ANOTHER_DEVICE


class GradeConflict(GradeError):
    """The write was based on a grade that has moved on (another tab, a stale draft) or would
    silently change a submitted grade: `grade` is the grade as stored (the API's 409 body),
    `cause` who wrote it (a `Cause`)."""

    def __init__(self, problems: list[str] | str, *, grade: Grade, cause: str = Cause.UNKNOWN):
        super().__init__(problems)
        self.grade = grade
        self.cause = cause


def _where(cause: str, origin: Origin, earlier: str) -> str:
    """Who wrote the stored version, in words: `earlier` ("submission", "save") names what
    this page (or API client) sent before."""
    if cause != Cause.THIS_PAGE:
        return Cause.WHERE[cause]
    return f"by an earlier {earlier} from this page" if origin.page else "by your earlier request"


def stale_conflict(grade: Grade, origin: Origin, *, noun: str = "grade") -> GradeConflict:
    """A write based on a version of the grade that another page (or client) has replaced."""
    cause = conflict_cause(Origin.of(grade), origin)
    return GradeConflict(
        f"This {noun} changed {_where(cause, origin, 'save')} since this write was based on it "
        f"(now version {grade.version}): reload to see it, or send yours again based on it.",
        grade=grade,
        cause=cause,
    )


def submitted_conflict(
    grade: Grade, origin: Origin, *, noun: str = "grade", draft: bool = False
) -> GradeConflict:
    """A write that would change a submitted grade without asking for a revision: a
    submission that says something else, or a draft (`draft`)."""
    cause = conflict_cause(Origin.of(grade), origin)
    said = "a draft cannot change it" if draft else f"this {noun} says otherwise"
    return GradeConflict(
        f"Already submitted as {scales.shown(grade.score)} {_where(cause, origin, 'submission')}"
        f", and {said}: send yours as a submission with revise=true to change it.",
        grade=grade,
        cause=cause,
    )


def written_here(stored_page: str, origin: Origin) -> bool:
    """Whether the stored version (written by the page load `stored_page`) was written by the
    very page load now writing (it names itself: an API client that names no page never is):
    its next change is then based on everything it stored, whatever version it names (an
    answer lost on the way back left it behind by a version)."""
    return bool(origin.page) and stored_page == origin.page


@dataclass
class SpanInput:
    start: int
    end: int
    quote: str
    category: str
    note: str = ""


@dataclass
class GradeInput:
    """What the grading page or the API sends: every field optional in a draft."""

    score: Decimal | None = None
    awards: dict = field(default_factory=dict)
    deductions: list = field(default_factory=list)
    via_equivalent: list = field(default_factory=list)
    score_note: str = ""
    comment: str = ""
    step_verdicts: dict = field(default_factory=dict)
    first_wrong_step: int | None = None
    seconds_spent: int = 0
    spans: list[SpanInput] = field(default_factory=list)
    base_version: int | None = None  # the grade's version this was based on (None: not checked)

    @classmethod
    def from_data(cls, data: dict) -> GradeInput:
        """From validated JSON-like data (the API serializer and the page's autosave)."""
        score = data.get("score")
        try:
            score = None if score in (None, "") else Decimal(str(score))
        except InvalidOperation as exc:
            raise GradeError(f"score: {score!r} is not a number") from exc
        spans = [
            SpanInput(
                start=int(s["start"]),
                end=int(s["end"]),
                quote=str(s.get("quote", "")),
                category=str(s.get("category", "")),
                note=str(s.get("note", "")),
            )
            for s in data.get("spans") or []
        ]
        first_wrong = data.get("first_wrong_step")
        return cls(
            score=score,
            awards={str(k): str(v) for k, v in (data.get("awards") or {}).items()},
            deductions=[str(d) for d in data.get("deductions") or []],
            via_equivalent=[str(v) for v in data.get("via_equivalent") or []],
            score_note=str(data.get("score_note") or ""),
            comment=str(data.get("comment") or ""),
            step_verdicts={str(k): str(v) for k, v in (data.get("step_verdicts") or {}).items()},
            first_wrong_step=None if first_wrong in (None, "") else int(first_wrong),
            seconds_spent=max(0, int(data.get("seconds_spent") or 0)),
            spans=spans,
            base_version=data.get("base_version"),
        )

    @property
    def chose_anything(self) -> bool:
        """Whether the expert chose anything that grades: an award, a deduction or the final
        score (an explicit 0 included). Comments, spans and step verdicts alone do not."""
        return bool(self.awards) or bool(self.deductions) or self.score is not None


def not_graded_reason(*, checklist: bool) -> str:
    """Why a submission with nothing chosen is refused."""
    return NOT_GRADED_CHECKLIST if checklist else NOT_GRADED


def grade_snapshot(grade: Grade) -> dict:
    """The grade's judgement as JSON (for revisions and the API)."""
    return {
        "score": None if grade.score is None else str(grade.score.normalize()),
        "computed_score": None
        if grade.computed_score is None
        else str(grade.computed_score.normalize()),
        "awards": grade.awards,
        "deductions": grade.deductions,
        "via_equivalent": grade.via_equivalent,
        "score_note": grade.score_note,
        "comment": grade.comment,
        "step_verdicts": grade.step_verdicts,
        "first_wrong_step": grade.first_wrong_step,
        "spans": spans_snapshot(grade),
    }


def spans_snapshot(grade: Grade) -> list[dict]:
    """The grade's error spans as JSON (revisions, the API and the grading page)."""
    return [
        {"start": s.start, "end": s.end, "quote": s.quote, "category": s.category, "note": s.note}
        for s in grade.span_list
    ]


def scheme_of(item: Item) -> Scheme | None:
    if item.scheme_id is None or not item.scheme.structure:
        return None
    return Scheme.from_dict(item.scheme.structure)


@dataclass(frozen=True)
class GradeRules:
    """What a judgement of an item is checked against: the campaign's scale and error
    taxonomy, the proof's source text and the pinned scheme version's structure."""

    scale: str
    taxonomy: dict[str, str]
    text: str
    scheme: Scheme | None

    @classmethod
    def of(cls, item: Item) -> GradeRules:
        return cls(
            scale=item.campaign.scale,
            taxonomy=item.campaign.taxonomy_labels(),
            text=item.proof.text,
            scheme=scheme_of(item),
        )


@dataclass(frozen=True)
class GradeChecked:
    """A judgement checked against the item's rules: the checklist's computed score, the final
    score (the expert's, or on a submission the computed one floored to the scale) and what is
    wrong."""

    computed: Decimal | None
    score: Decimal | None
    problems: list[str]


def grade_check(rules: GradeRules, data: GradeInput, *, final: bool) -> GradeChecked:
    """Validates `data` against the item's rules (scale, scheme, taxonomy, proof text). Spans
    are re-anchored to the proof's source text. The computed score is None while nothing is
    chosen (no award, deduction or final score): an untouched item stores no score of either
    kind. Once awards or deductions are given, a submission without a score takes the computed
    one (floored to the scale), and a final score other than that is an override: it needs a
    note (`score_note`)."""
    problems: list[str] = []
    computed: Decimal | None = None
    score = data.score
    scheme = rules.scheme
    checklist = scheme is not None and rules.scale == Scale.ZERO_TO_SEVEN
    if checklist:
        award_problems = check_awards(scheme, data.awards, data.deductions)
        if award_problems:
            problems.extend(award_problems)
        elif data.chose_anything:
            try:
                computed = compute_score(scheme, data.awards, data.deductions)
            except AwardError as exc:
                problems.extend(exc.problems)
        known = {cp.id for cp in scheme.all_checkpoints()}
        problems.extend(
            f"{key} is not a checkpoint of this scheme"
            for key in data.via_equivalent
            if key not in known
        )
    # the checklist decides the score once it is used (an award or a deduction); a score alone
    # on a checklist item is a holistic judgement, not an override
    used = bool(data.awards or data.deductions)
    derived = (
        scales.floor_to_scale(computed, rules.scale) if used and computed is not None else None
    )
    if data.score is not None:
        try:
            scales.check_value(data.score, rules.scale)
        except scales.ScaleError as exc:
            problems.append(f"score: {exc}")
        else:
            if final and derived is not None and data.score != derived and not data.score_note:
                problems.append(
                    f"score_note: your final score {scales.shown(data.score)} overrides the "
                    f"computed {scales.shown(derived)}: say why in a note"
                )
    elif final and derived is not None:
        score = derived
    elif final and not data.chose_anything:
        problems.append(not_graded_reason(checklist=checklist))
    elif final:
        problems.append("score: give a score before submitting")
    for index, span in enumerate(data.spans, start=1):
        if span.category not in rules.taxonomy:
            problems.append(f"error span {index}: unknown category {span.category!r}")
        try:
            span.start, span.end, span.quote = locate_span(
                rules.text, span.start, span.end, span.quote
            )
        except SpanError as exc:
            problems.append(f"error span {index}: {exc}")
    data.step_verdicts, data.first_wrong_step, step_problems = steps_check(
        data.step_verdicts, data.first_wrong_step
    )
    problems.extend(step_problems)
    return GradeChecked(computed=computed, score=score, problems=problems)


def span_key(span: dict) -> tuple:
    return (span["start"], span["end"], span["category"], span["quote"], span["note"])


def same_judgement(grade: Grade, data: GradeInput, checked: GradeChecked) -> bool:
    """Whether `data` (checked) says what the stored grade says: an identical repeat."""
    stored = grade_snapshot(grade)
    given = {
        "score": None if checked.score is None else scales.shown(checked.score),
        "awards": data.awards,
        "deductions": data.deductions,
        "via_equivalent": data.via_equivalent,
        "score_note": data.score_note,
        "comment": data.comment,
        "step_verdicts": data.step_verdicts,
        "first_wrong_step": data.first_wrong_step,
    }
    if any(stored[key] != value for key, value in given.items()):
        return False
    spans = sorted((asdict(span) for span in data.spans), key=span_key)
    return sorted(stored["spans"], key=span_key) == spans
