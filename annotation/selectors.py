"""Reads of the annotation app. Permission checks live in the `*_for_user` selectors; blindness
(an expert sees only their own judgement of an item until it is final or revealed) is enforced
here, so pages and the API cannot forget it."""

from __future__ import annotations

import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from decimal import Decimal
from functools import cache

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied
from django.db import connection
from django.db.models import Count, Exists, OuterRef, Prefetch, Q, QuerySet, Subquery
from django.http import Http404
from django.utils import timezone

from annotation.models import (
    Assignment,
    AssignmentStatus,
    Campaign,
    CampaignMember,
    Grade,
    GradeRevision,
    GradeStatus,
    Item,
    MemberRole,
)
from annotation.slots import assignment_open_sql
from config.roles import Role, has_role
from config.rows import columns, model_from_row
from problems.models import Problem, Proof, ReferenceSolution
from rubrics.models import MarkingScheme
from rubrics.selectors import schemes_approved_for_problems
from rubrics.structure import Scheme, score_breakdown


def is_campaign_admin(user: AbstractBaseUser, campaign: Campaign) -> bool:
    return has_role(user, Role.ADMIN)


def campaign_list_for_user(user: AbstractBaseUser) -> QuerySet[Campaign]:
    """Admins see every campaign; experts the campaigns they are members of."""
    qs = Campaign.objects.all()
    if not has_role(user, Role.ADMIN):
        qs = qs.filter(members__user=user).distinct()
    return qs.annotate(item_count=Count("items", distinct=True)).order_by("-created_at")


def campaign_for_user(*, slug: str, user: AbstractBaseUser, admin: bool = False) -> Campaign:
    campaign = Campaign.objects.filter(slug=slug).select_related("generator_config").first()
    if campaign is None:
        raise Http404("No such campaign.")
    if has_role(user, Role.ADMIN):
        return campaign
    if admin:
        raise PermissionDenied("Only admins manage campaigns.")
    if not CampaignMember.objects.filter(campaign=campaign, user=user).exists():
        raise PermissionDenied("You are not a member of this campaign.")
    return campaign


@cache
def _expert_campaign_sql() -> tuple[tuple, str]:
    names, select = columns(Campaign, "c")
    return (
        names,
        f"""
SELECT {select},
       EXISTS (SELECT 1 FROM {CampaignMember._meta.db_table} e
               WHERE e.campaign_id = c.id AND e.user_id = %(user)s AND e.role = %(expert)s),
       EXISTS (SELECT 1 FROM {Assignment._meta.db_table} a
               JOIN {Item._meta.db_table} i ON i.id = a.item_id
               WHERE a.expert_id = %(user)s AND i.campaign_id = c.id
                 AND {assignment_open_sql("a", "i")})
FROM {Campaign._meta.db_table} c
WHERE c.slug = %(slug)s""",
    )


def expert_campaign(*, slug: str, user: AbstractBaseUser) -> Campaign:
    """The campaign where `user` grades: an expert membership is required (admins too). One
    hand-written statement (the ORM's compiled subqueries cost more CPU than a "next"): the
    campaign, whether the user is an expert of it, and whether they have open work in it
    (`has_open_work`, which `services.assignment_next` takes as `has_open`)."""
    names, sql = _expert_campaign_sql()
    with connection.cursor() as cursor:
        cursor.execute(sql, {"slug": slug, "user": user.pk, "expert": MemberRole.EXPERT})
        row = cursor.fetchone()
    if row is None:
        raise Http404("No such campaign.")
    campaign = model_from_row(Campaign, names, row[:-2])
    campaign.is_expert, campaign.has_open_work = bool(row[-2]), bool(row[-1])
    ensure_campaign_expert(campaign=campaign, user=user, known=campaign.is_expert)
    return campaign


def ensure_campaign_expert(
    *, campaign: Campaign, user: AbstractBaseUser, known: bool | None = None
) -> None:
    """PermissionDenied unless `user` is an expert member of the campaign (`known`: the answer,
    when a read already gave it, as `GradingView.campaign_expert` does)."""
    if known is None:
        known = CampaignMember.objects.filter(
            campaign=campaign, user=user, role=MemberRole.EXPERT
        ).exists()
    if not known:
        raise PermissionDenied("You are not an expert of this campaign.")


def campaign_members(campaign: Campaign) -> QuerySet[CampaignMember]:
    return campaign.members.select_related("user").order_by("role", "user__username")


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
    solutions = (
        list(ReferenceSolution.objects.filter(problem_id=item.proof.problem_id))
        if with_solutions
        else []
    )
    others: list[Grade] = []
    if admin or ((item.is_final or item.judgements_visible) and not item.is_gold):
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


_PROOF = ("id", "problem_id", "text")
_PROBLEM = ("id", "external_id", "statement")
_SCHEME = ("id", "version", "structure")
_PAGE_SCHEME = ("id", "version", "structure", "text")
# An item with the caller's assignment (only while they are a member of its campaign: an expert
# removed keeps the row but loses the item) and grade: the joins of the hand-written reads.
_ITEM_FROM = f"""FROM {Item._meta.db_table} i
JOIN {Campaign._meta.db_table} c ON c.id = i.campaign_id
JOIN {Proof._meta.db_table} p ON p.id = i.proof_id
JOIN {Problem._meta.db_table} pr ON pr.id = p.problem_id
LEFT JOIN {MarkingScheme._meta.db_table} s ON s.id = i.scheme_id
LEFT JOIN {Assignment._meta.db_table} a ON a.item_id = i.id AND a.expert_id = %(user)s
  AND EXISTS (SELECT 1 FROM {CampaignMember._meta.db_table} m
              WHERE m.campaign_id = i.campaign_id AND m.user_id = %(user)s)
LEFT JOIN {Grade._meta.db_table} g ON g.item_id = i.id AND g.expert_id = %(user)s
WHERE i.id = %(item)s"""


@cache
def _api_item_sql() -> tuple[str, list[tuple]]:
    """The API's read of an item, and the (model, attnames) of its row's parts in order."""
    parts = [
        (Item, "i", None),
        (Campaign, "c", None),
        (Proof, "p", _PROOF),
        (Problem, "pr", _PROBLEM),
        (MarkingScheme, "s", _SCHEME),
    ]
    selected = [(model, *columns(model, alias, names)) for model, alias, names in parts]
    sql = f"""
SELECT {", ".join(select for _, _, select in selected)},
       a.id, g.id,
       EXISTS (SELECT 1 FROM {CampaignMember._meta.db_table} e
               WHERE e.campaign_id = i.campaign_id AND e.user_id = %(user)s
                 AND e.role = %(expert)s)
{_ITEM_FROM}"""
    return sql, [(model, names) for model, names, _ in selected]


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
    selected = [(model, *columns(model, alias, names)) for model, alias, names in parts]
    sql = f"""
SELECT {", ".join(select for _, _, select in selected)}, g.id
{_ITEM_FROM}"""
    return sql, [(model, names) for model, names, _ in selected]


def item_view_for_json(
    *,
    item_id: int,
    user: AbstractBaseUser,
    assignment: Assignment | None = None,
    campaign: Campaign | None = None,
) -> GradingView:
    """`grading_view_for_user` for the JSON answers, the API's and the grading page's autosave
    and submit (same checks, same blindness, no reference solutions): the item, its campaign,
    what the API shows of its proof, problem and scheme, the caller's assignment and grade ids
    and whether the caller is an expert of the campaign, in one hand-written statement (the
    ORM's compiled joins cost more CPU than a submission's own work), then the grade if there
    is one. `assignment` is one the caller has just leased, `campaign` one it has just read
    (neither is built again)."""
    sql, parts = _api_item_sql()
    with connection.cursor() as cursor:
        cursor.execute(sql, {"item": item_id, "user": user.pk, "expert": MemberRole.EXPERT})
        row = cursor.fetchone()
    if row is None:
        raise Http404("No such item.")
    built, at = _models_from_row(row, parts)
    item, read_campaign, proof, problem, scheme = built
    assignment_id, grade_id, is_expert = row[at:]
    item.campaign = (
        campaign if campaign is not None and campaign.pk == item.campaign_id else read_campaign
    )
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
        item__campaign=campaign,
        expert=expert,
        status=AssignmentStatus.ACTIVE,
        leased_until__gt=timezone.now(),
    ).count()
    return ExpertTotals(
        submitted=len(submitted),
        drafts=sum(1 for status, _ in grades if status == GradeStatus.DRAFT),
        in_progress=active,
        median_seconds=statistics.median(submitted) if submitted else None,
    )


def own_grades_in_campaign(*, campaign: Campaign, expert: AbstractBaseUser) -> QuerySet[Grade]:
    """The expert's own judgements in the campaign, drafts and submitted, the most recently
    changed first: where an expert goes back to a draft or revises a grade. Only their own
    (blindness holds), and nothing of the proof but its problem (config.visibility): not its
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


@dataclass
class ExpertRow:
    user_id: int
    username: str
    submitted: int = 0
    active: int = 0
    median_seconds: float | None = None
    fast: int = 0
    queue: list[Assignment] = field(default_factory=list)


@dataclass
class Progress:
    items: int
    done: int
    in_progress: int
    waiting: int
    final: int  # final labels, as the exports count them (campaign_labelled_items)
    judgements_needed: int
    judgements_submitted: int
    experts: list[ExpertRow]
    scores_by_generator: dict[str, list[Decimal]]
    held: int = 0  # held back by the routing budget (exports.routing.services)


def generator_score_rows(
    scores_by_generator: dict[str, list[Decimal]], values: tuple[Decimal, ...]
) -> list[dict]:
    """The table beside the plot of scores per generator: each generator's number of submitted
    scores, their mean, and how many fell on each value of the scale (`values`)."""
    return [
        {
            "generator": generator,
            "n": len(scores),
            "mean": statistics.fmean(float(s) for s in scores),
            "counts": [sum(1 for s in scores if s == value) for value in values],
        }
        for generator, scores in scores_by_generator.items()
    ]


def campaign_labelled_items(campaign_id: int) -> QuerySet[Item]:
    """The rule for a campaign's final labels: its items that hold one (adjudication's
    FinalLabel, related name `final_label`), whatever the label's source, gold items included,
    whether judgements may still revise it or not (`Item.is_final`). The dataset exports write a
    row for each (`exports.formats.base`); the dashboard counts them as "final labels"."""
    return Item.objects.filter(campaign_id=campaign_id, final_label__isnull=False)


def campaign_progress(campaign: Campaign) -> Progress:
    """Items done (all judgements submitted) / in progress (some work or a lease) / waiting,
    per-expert counts, median time and queues, scores per generator, final labels (as exported:
    `campaign_labelled_items`): a fixed number of queries whatever the campaign's size."""
    now = timezone.now()
    rows = list(
        Item.objects.filter(campaign=campaign)
        .annotate(
            labelled=Exists(campaign_labelled_items(campaign.pk).filter(pk=OuterRef("pk"))),
            submitted=Count(
                "grades", filter=Q(grades__status=GradeStatus.SUBMITTED), distinct=True
            ),
            active=Count(
                "assignments",
                filter=Q(
                    assignments__status=AssignmentStatus.ACTIVE,
                    assignments__leased_until__gt=now,
                ),
                distinct=True,
            ),
        )
        .values(
            "id", "required_judgements", "submitted", "active", "labelled", "is_gold", "route_held"
        )
    )
    items = [i for i in rows if not i["is_gold"]]
    done = sum(1 for i in items if i["submitted"] >= i["required_judgements"])
    in_progress = sum(
        1
        for i in items
        if i["submitted"] < i["required_judgements"] and (i["submitted"] or i["active"])
    )
    # held back by the routing budget: no expert is given them (labelled automatically or not)
    held = sum(1 for i in items if i["route_held"] and not i["submitted"] and not i["active"])
    experts: dict[int, ExpertRow] = {}
    members = CampaignMember.objects.filter(campaign=campaign, role=MemberRole.EXPERT)
    for member in members.select_related("user").order_by("user__username"):
        experts[member.user_id] = ExpertRow(member.user_id, member.user.get_username())
    seconds: dict[int, list[int]] = defaultdict(list)
    scores: dict[str, list[Decimal]] = defaultdict(list)
    for expert_id, username, seconds_spent, score, generator in Grade.objects.filter(
        item__campaign=campaign, status=GradeStatus.SUBMITTED
    ).values_list(
        "expert_id", "expert__username", "seconds_spent", "score", "item__proof__generator"
    ):
        row = experts.setdefault(expert_id, ExpertRow(expert_id, username))
        row.submitted += 1
        seconds[expert_id].append(seconds_spent)
        if seconds_spent < campaign.fast_seconds:
            row.fast += 1
        scores[generator].append(score)
    for expert_id, values in seconds.items():
        experts[expert_id].median_seconds = statistics.median(values)
    queue = (
        Assignment.objects.filter(
            item__campaign=campaign, status=AssignmentStatus.ACTIVE, leased_until__gt=now
        )
        .select_related("expert", "item__proof__problem")
        .order_by("expert_id", "created_at")
    )
    for assignment in queue:
        row = experts.setdefault(
            assignment.expert_id,
            ExpertRow(assignment.expert_id, assignment.expert.get_username()),
        )
        row.active += 1
        row.queue.append(assignment)
    return Progress(
        items=len(items),
        done=done,
        in_progress=in_progress,
        waiting=len(items) - done - in_progress - held,
        held=held,
        final=sum(1 for i in rows if i["labelled"]),
        judgements_needed=sum(i["required_judgements"] for i in items),
        judgements_submitted=sum(min(i["submitted"], i["required_judgements"]) for i in items),
        experts=list(experts.values()),
        scores_by_generator=dict(sorted(scores.items())),
    )


def proof_selection(
    *, contest: str = "", year: int | None = None, generator: str = "", problem: str = ""
) -> QuerySet[Proof]:
    """Proofs matching the selection (empty filters match everything)."""
    qs = Proof.objects.select_related("problem")
    if contest:
        qs = qs.filter(problem__contest=contest)
    if year:
        qs = qs.filter(problem__year=year)
    if generator:
        qs = qs.filter(generator=generator)
    if problem:
        qs = qs.filter(problem__external_id=problem)
    return qs.order_by("problem__external_id", "generator", "sample_key")


def selection_choices() -> dict[str, list]:
    return {
        "contests": list(
            Proof.objects.values_list("problem__contest", flat=True)
            .distinct()
            .order_by("problem__contest")
        ),
        "years": list(
            Proof.objects.exclude(problem__year=None)
            .values_list("problem__year", flat=True)
            .distinct()
            .order_by("problem__year")
        ),
        "generators": list(
            Proof.objects.values_list("generator", flat=True).distinct().order_by("generator")
        ),
    }


HAND_ASSIGNABLE_SHOWN = 1000


def items_for_hand_assignment(campaign: Campaign) -> list[tuple[str, list[Item]]]:
    """The items an admin may still give to an expert (not final), grouped by problem, for the
    dashboard's "assign by hand" list: problem, then proof (generator, sample); at most
    HAND_ASSIGNABLE_SHOWN of them."""
    items = (
        Item.objects.filter(campaign=campaign, is_final=False)
        .select_related("proof__problem")
        .only(
            "id",
            "submitted_count",
            "required_judgements",
            "is_gold",
            "proof__generator",
            "proof__sample_index",
            "proof__sample_key",
            "proof__problem__external_id",
        )
        .order_by("proof__problem__external_id", "proof__generator", "proof__sample_index", "id")[
            :HAND_ASSIGNABLE_SHOWN
        ]
    )
    groups: dict[str, list[Item]] = defaultdict(list)
    for item in items:
        groups[item.proof.problem.external_id].append(item)
    return list(groups.items())


def experts_for_assignment(campaign: Campaign) -> QuerySet:
    return (
        get_user_model()
        .objects.filter(
            campaign_memberships__campaign=campaign, campaign_memberships__role=MemberRole.EXPERT
        )
        .order_by("username")
        .distinct()
    )


def revisions_for_campaign(campaign: Campaign) -> QuerySet[GradeRevision]:
    return (
        GradeRevision.objects.filter(grade__item__campaign=campaign)
        .select_related("grade__expert", "changed_by")
        .order_by("-changed_at")
    )


@dataclass(frozen=True)
class OlderPin:
    """An item of a campaign pinned to an older scheme version than its problem's current one
    (the approved version, else the newest frozen), and why it stays there."""

    item_id: int
    problem: str
    pinned: int | None  # the pinned version's number; None: pinned to no scheme
    current: int
    reason: str


def items_on_older_schemes(campaign: Campaign) -> list[OlderPin]:
    """The campaign's items that still use an older scheme version than the one new items
    would pin, with the reason in words. Two queries whatever the campaign's size."""
    items = list(
        Item.objects.filter(campaign=campaign)
        .annotate(
            submitted=Count("grades", filter=Q(grades__status=GradeStatus.SUBMITTED)),
        )
        .values(
            "id",
            "proof__problem_id",
            "proof__problem__external_id",
            "scheme_id",
            "scheme__version",
            "is_final",
            "submitted",
        )
        .order_by("proof__problem__external_id", "id")
    )
    current = schemes_approved_for_problems({row["proof__problem_id"] for row in items})
    found = []
    for row in items:
        scheme = current.get(row["proof__problem_id"])
        if scheme is None or scheme.pk == row["scheme_id"]:
            continue
        pinned = row["scheme__version"]
        was = f"v{pinned}" if pinned is not None else "no scheme"
        if row["submitted"]:
            count = row["submitted"]
            reason = (
                f"graded under {was} ({count} submitted grade{'s' if count != 1 else ''}): "
                "grades keep the version they were made under"
            )
        elif row["is_final"]:
            reason = "its label is final"
        elif not campaign.is_open:
            reason = "the campaign is closed: approving a version moves no item of it"
        else:
            reason = (
                f"not graded yet, but pinned before v{scheme.version} was approved and not moved "
                "then (its campaign was not open)"
            )
        found.append(
            OlderPin(
                item_id=row["id"],
                problem=row["proof__problem__external_id"],
                pinned=pinned,
                current=scheme.version,
                reason=reason,
            )
        )
    return found


def assignment_for_expert(*, item_id: int, expert: AbstractBaseUser) -> Assignment | None:
    """The expert's assignment of the item, if any."""
    return Assignment.objects.filter(item_id=item_id, expert=expert).first()


def item_score_breakdown(*, item: Item, awards: dict, deductions: list):
    """How the item's checklist (or band) scheme scores these awards and deductions (a
    rubrics.structure.ScoreBreakdown), or None when the item has no scheme to compute from;
    AwardError when they do not fit it."""
    if not item.scheme_id or not item.scheme.structure:
        return None
    return score_breakdown(Scheme.from_dict(item.scheme.structure), awards, deductions)
