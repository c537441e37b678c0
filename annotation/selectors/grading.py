"""Reads of grading: the item as the grading page and the API may show it (the one place blindness
is decided), an expert's own grades and totals, the proofs a user holds blind, the score a
scheme gives, and what an expert learns once their item is final."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from decimal import Decimal
from functools import cache

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ObjectDoesNotExist
from django.db import connection
from django.db.models import Exists, F, OuterRef, Prefetch, Q, QuerySet, Subquery
from django.http import Http404
from django.utils import timezone

from annotation.models import (
    Assignment,
    Campaign,
    CampaignMember,
    CampaignStatus,
    Grade,
    GradeRevision,
    GradeStatus,
    Item,
    JudgementStatus,
    MemberRole,
    PairItem,
    PairJudgement,
)
from annotation.slots import lease_live, open_work_sql
from core.roles import Role, has_role
from core.sql import Table, columns, model_from_row
from core.visibility import blind_to_proof
from problems.models import Problem, Proof, ReferenceSolution
from rubrics.models import MarkingScheme
from rubrics.structure import Scheme, score_breakdown


@dataclass
class GradingView:
    """Everything the grading page shows, read in a fixed number of queries."""

    item: Item
    assignment: Assignment | None
    grade: Grade | None
    solutions: list[ReferenceSolution]
    others: list[Grade] = field(default_factory=list)  # only when the item allows it
    # whether the user is an expert member of the item's campaign, when read with the item
    campaign_expert: bool | None = None
    # whether the user holds open work in the item's campaign on another item, when read with
    # the item (`services.assignment_next` takes it as `has_open` once this item is judged)
    open_elsewhere: bool | None = None


def _one(queryset: QuerySet):
    """The first row of a queryset known to hold at most one (no ORDER BY to build or run)."""
    rows = list(queryset.order_by()[:1])
    return rows[0] if rows else None


def _models_from_row(row: tuple, parts: list[tuple]) -> tuple[list, int]:
    """The instances of a hand-written read's parts (None for a part its LEFT JOIN missed),
    and where the row's other values start."""
    built, at = [], 0
    for model, names in parts:
        values = row[at : at + len(names)]
        at += len(names)
        built.append(None if values[0] is None else model_from_row(model, names, values))
    return built, at


def grading_view_for_user(*, item_id: int, user: AbstractBaseUser) -> GradingView:
    """The item as `user` may see it. Experts reach only items assigned to them (never another
    expert's judgement unless the item is final or revealed); admins see every grade. Anyone
    else gets a 404, so item ids cannot be probed."""
    sql, parts = _page_item_sql()
    with connection.cursor() as cursor:
        cursor.execute(sql, {"item": item_id, "user": user.pk})
        row = cursor.fetchone()
    if row is None:
        raise Http404("No such item.")
    built, at = _models_from_row(row, parts)
    item, campaign, proof, problem, scheme, assignment = built
    item.campaign, item.proof, proof.problem, item.scheme = campaign, proof, problem, scheme
    return _grading_view(item, user, assignment, with_solutions=True, has_grade=row[at] is not None)


def _grading_view(
    item: Item,
    user: AbstractBaseUser,
    assignment: Assignment | None,
    *,
    with_solutions: bool,
    has_grade: bool = True,
) -> GradingView:
    """The checks and reads that follow the item's: the one place blindness is decided.
    `has_grade=False`: the caller knows the user has no grade of the item (not read)."""
    admin = has_role(user, Role.ADMIN)
    if assignment is None and not admin:
        raise Http404("No such item.")
    grade = (
        _one(Grade.objects.filter(item=item, expert=user).prefetch_related("spans"))
        if has_grade
        else None
    )
    solutions = _solutions(problem_id=item.proof.problem_id) if with_solutions else []
    others: list[Grade] = []
    # an admin who holds the item as an expert, ungraded, grades blind like any expert
    # (core.visibility): the others' judgements show once they have submitted
    admin_sees = admin and not blind_to_proof(user, item.proof_id)
    if admin_sees or ((item.is_final or item.judgements_visible) and not item.is_gold):
        others = list(
            Grade.objects.filter(item=item, status=GradeStatus.SUBMITTED)
            .exclude(expert=user)
            .select_related("expert")
            .prefetch_related(
                "spans", Prefetch("revisions", GradeRevision.objects.select_related("changed_by"))
            )
        )
    return GradingView(
        item=item, assignment=assignment, grade=grade, solutions=solutions, others=others
    )


def _solutions(*, problem_id: int) -> list[ReferenceSolution]:
    """The problem's reference solutions as the grading page shows them (their text), in the
    model's order, by hand-written SQL (the ORM compiled this read on every page load)."""
    names, select = columns(ReferenceSolution, "r", ("id", "problem_id", "text"))
    r = Table(ReferenceSolution, "r")
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {select} FROM {r} WHERE {r.problem_id} = %s ORDER BY {r.id}", [problem_id]
        )
        return [model_from_row(ReferenceSolution, names, row) for row in cursor.fetchall()]


# statement_id: the statement the proof was rated against, when not its problem's current
# one (problems.models.Proof.statement_text reads it only then)
_PROOF = ("id", "problem_id", "text", "statement_id")


_PROBLEM = ("id", "external_id", "statement", "statement_version")


_SCHEME = ("id", "version", "structure")


_PAGE_SCHEME = ("id", "version", "structure", "text")


# An item with the caller's assignment (only while they are a member of its campaign: an expert
# removed keeps the row but loses the item) and grade: the joins of the hand-written reads.
i, c, p, pr = Table(Item, "i"), Table(Campaign, "c"), Table(Proof, "p"), Table(Problem, "pr")
s, a, m, g = (
    Table(MarkingScheme, "s"),
    Table(Assignment, "a"),
    Table(CampaignMember, "m"),
    Table(Grade, "g"),
)
_ITEM_FROM = f"""FROM {i}
JOIN {c} ON {c.id} = {i.campaign_id}
JOIN {p} ON {p.id} = {i.proof_id}
JOIN {pr} ON {pr.id} = {p.problem_id}
LEFT JOIN {s} ON {s.id} = {i.scheme_id}
LEFT JOIN {a} ON {a.item_id} = {i.id} AND {a.expert_id} = %(user)s
  AND EXISTS (SELECT 1 FROM {m}
              WHERE {m.campaign_id} = {i.campaign_id} AND {m.user_id} = %(user)s)
LEFT JOIN {g} ON {g.item_id} = {i.id} AND {g.expert_id} = %(user)s
WHERE {i.id} = %(item)s"""


def _item_sql(parts: list[tuple], extra: str) -> tuple[str, list[tuple]]:
    """An item read over `_ITEM_FROM`: the columns of `parts` ((model, alias, attnames or None
    for all)) then `extra`; and the (model, attnames) of the row's parts in order."""
    selected = [(model, *columns(model, alias, names)) for model, alias, names in parts]
    sql = f"""
SELECT {", ".join(select for _, _, select in selected)}, {extra}
{_ITEM_FROM}"""
    return sql, [(model, names) for model, names, _ in selected]


@cache
def _api_item_sql(*, with_campaign: bool, with_open_work: bool) -> tuple[str, list[tuple]]:
    """The API's read of an item (with its campaign's columns unless the caller holds the
    campaign; with whether the caller holds open work on another item of the campaign when
    asked), and the (model, attnames) of its row's parts in order."""
    parts = [
        (Item, "i", None),
        *([(Campaign, "c", None)] if with_campaign else []),
        (Proof, "p", _PROOF),
        (Problem, "pr", _PROBLEM),
        (MarkingScheme, "s", _SCHEME),
    ]
    e = Table(CampaignMember, "e")
    return _item_sql(
        parts,
        f"""{a.id}, {g.id},
       EXISTS (SELECT 1 FROM {e}
               WHERE {e.campaign_id} = {i.campaign_id} AND {e.user_id} = %(user)s
                 AND {e.role} = %(expert)s),
       {open_work_sql(i.campaign_id, other_than=i.id) if with_open_work else "NULL"}""",
    )


@cache
def _page_item_sql() -> tuple[str, list[tuple]]:
    """The grading page's read of an item: the API's joins, with the parts the page shows (the
    problem's statement, the scheme's text) and the caller's whole assignment."""
    parts = [
        (Item, "i", None),
        (Campaign, "c", None),
        (Proof, "p", _PROOF),
        (Problem, "pr", _PROBLEM),
        (MarkingScheme, "s", _PAGE_SCHEME),
        (Assignment, "a", None),
    ]
    return _item_sql(parts, g.id)


def item_view_for_json(
    *,
    item_id: int,
    user: AbstractBaseUser,
    assignment: Assignment | None = None,
    campaign: Campaign | None = None,
    with_open_work: bool = False,
) -> GradingView:
    """`grading_view_for_user` for the JSON answers, the API's and the grading page's autosave
    and submit (same checks, same blindness, no reference solutions): the item, its campaign,
    what the API shows of its proof, problem and scheme, the caller's assignment and grade ids
    and whether the caller is an expert of the campaign, in one hand-written statement (the
    ORM's compiled joins cost more CPU than a submission's own work), then the grade if there
    is one. `assignment` is one the caller has just leased, `campaign` one it has just read
    (neither is read or built again). `with_open_work`: `open_elsewhere` is read too (a
    submission that asks for the next item)."""
    sql, parts = _api_item_sql(with_campaign=campaign is None, with_open_work=with_open_work)
    with connection.cursor() as cursor:
        cursor.execute(sql, {"item": item_id, "user": user.pk, "expert": MemberRole.EXPERT})
        row = cursor.fetchone()
    if row is None:
        raise Http404("No such item.")
    built, at = _models_from_row(row, parts)
    item, proof, problem, scheme = built[0], *built[-3:]
    if campaign is not None and campaign.pk != item.campaign_id:  # not the item's: read that
        return item_view_for_json(
            item_id=item_id, user=user, assignment=assignment, with_open_work=with_open_work
        )
    assignment_id, grade_id, is_expert, open_elsewhere = row[at:]
    item.campaign = built[1] if campaign is None else campaign
    item.proof, proof.problem, item.scheme = proof, problem, scheme
    if assignment is None or assignment.pk != assignment_id:
        assignment = (
            model_from_row(
                Assignment, ("id", "item_id", "expert_id"), (assignment_id, item.pk, user.pk)
            )
            if assignment_id is not None
            else None
        )
    view = _grading_view(
        item, user, assignment, with_solutions=False, has_grade=grade_id is not None
    )
    view.campaign_expert = bool(is_expert)
    view.open_elsewhere = None if open_elsewhere is None else bool(open_elsewhere)
    return view


def grades_for_expert(*, expert: AbstractBaseUser, campaign: Campaign | None = None) -> QuerySet:
    qs = Grade.objects.filter(expert=expert).select_related(
        "item__campaign", "item__proof__problem"
    )
    if campaign is not None:
        qs = qs.filter(item__campaign=campaign)
    return qs.prefetch_related("spans").order_by("-updated_at")


@dataclass
class ExpertTotals:
    submitted: int
    drafts: int
    in_progress: int
    median_seconds: float | None


def expert_totals(*, campaign: Campaign, expert: AbstractBaseUser) -> ExpertTotals:
    grades = list(
        Grade.objects.filter(item__campaign=campaign, expert=expert).values_list(
            "status", "seconds_spent"
        )
    )
    submitted = [seconds for status, seconds in grades if status == GradeStatus.SUBMITTED]
    active = Assignment.objects.filter(
        lease_live(timezone.now()), item__campaign=campaign, expert=expert
    ).count()
    return ExpertTotals(
        submitted=len(submitted),
        drafts=sum(1 for status, _ in grades if status == GradeStatus.DRAFT),
        in_progress=active,
        median_seconds=statistics.median(submitted) if submitted else None,
    )


def proofs_held_blind(user: AbstractBaseUser) -> QuerySet:
    """The proofs `user` holds blind (core.visibility): those of the items of every open
    campaign where they are an expert member and have no submitted grade on that item, as a
    subquery of `proof_id`s. The one rule every door asks through `core.visibility`."""
    submitted = Grade.objects.filter(
        item_id=OuterRef("pk"), expert_id=user.pk, status=GradeStatus.SUBMITTED
    )
    # the user's few open campaigns first (campaign_member_unique), then their items (item_queue)
    campaigns = CampaignMember.objects.filter(
        user_id=user.pk, role=MemberRole.EXPERT, campaign__status=CampaignStatus.OPEN
    ).values("campaign_id")
    items = (
        Item.objects.filter(campaign_id__in=campaigns).exclude(Exists(submitted)).values("proof_id")
    )
    # a pairwise campaign's pairs too: both proofs of each pair the user has not judged
    judged = PairJudgement.objects.filter(
        pair_id=OuterRef("pk"), expert_id=user.pk, status=JudgementStatus.SUBMITTED
    )
    pairs = PairItem.objects.filter(campaign_id__in=campaigns).exclude(Exists(judged))
    return (
        Proof.objects.filter(
            Q(pk__in=items)
            | Q(pk__in=pairs.values("proof_a_id"))
            | Q(pk__in=pairs.values("proof_b_id"))
        )
        .annotate(proof_id=F("pk"))
        .values("proof_id")
    )


def own_grades_in_campaign(*, campaign: Campaign, expert: AbstractBaseUser) -> QuerySet[Grade]:
    """The expert's own judgements in the campaign, drafts and submitted, the most recently
    changed first: where an expert goes back to a draft or revises a grade. Only their own
    (blindness holds), and nothing of the proof but its problem (core.visibility): not its
    model, and a gold item is not told apart. `assignment_status` is "released" for a draft the expert skipped."""
    own_assignment = Assignment.objects.filter(item_id=OuterRef("item_id"), expert=expert)
    return (
        Grade.objects.filter(item__campaign=campaign, expert=expert)
        .annotate(assignment_status=Subquery(own_assignment.values("status")[:1]))
        .select_related("item__proof__problem")
        .only(
            "id",
            "status",
            "score",
            "submitted_at",
            "updated_at",
            "item__id",
            "item__is_final",
            "item__is_gold",
            "item__proof__problem__external_id",
        )
        .order_by("-updated_at", "-id")
    )


def item_score_breakdown(*, item: Item, awards: dict, deductions: list):
    """How the item's checklist (or band) scheme scores these awards and deductions (a
    rubrics.structure.ScoreBreakdown), or None when the item has no scheme to compute from;
    AwardError when they do not fit it."""
    if not item.scheme_id or not item.scheme.structure:
        return None
    return score_breakdown(Scheme.from_dict(item.scheme.structure), awards, deductions)


@dataclass(frozen=True)
class FinalFeedback:
    """What an expert learns once their item is final: the label and, when an adjudicator
    decided it, their rationale (the feedback that calibrates experts)."""

    value: Decimal
    source: str
    rationale: str
    resolved_by: str


def final_feedback(*, item: Item) -> FinalFeedback | None:
    if not item.is_final:
        return None
    try:
        label = item.final_label
    except ObjectDoesNotExist:
        return None
    case = label.case
    return FinalFeedback(
        value=label.value,
        source=label.get_source_display(),
        rationale=case.rationale if case else "",
        resolved_by=case.resolved_by.get_username() if case and case.resolved_by else "",
    )
