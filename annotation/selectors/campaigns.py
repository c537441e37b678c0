"""Reads of campaigns: who may see and grade in one (`*_for_user`), its members, and what the
campaign page shows (progress, scores per generator, final labels, revisions, items on older
scheme versions)."""

from __future__ import annotations

import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from decimal import Decimal
from functools import cache

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied
from django.db import connection
from django.db.models import Count, Exists, OuterRef, Q, QuerySet
from django.http import Http404
from django.utils import timezone

from annotation.models import (
    Assignment,
    Campaign,
    CampaignMember,
    Grade,
    GradeRevision,
    GradeStatus,
    Item,
    MemberRole,
)
from annotation.slots import lease_live, open_work_sql
from core.roles import Role, has_role
from core.sql import Table, columns, model_from_row
from rubrics.selectors import schemes_approved_for_problems


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
    c, e = Table(Campaign, "c"), Table(CampaignMember, "e")
    return (
        names,
        f"""
SELECT {select},
       EXISTS (SELECT 1 FROM {e}
               WHERE {e.campaign_id} = {c.id} AND {e.user_id} = %(user)s AND {e.role} = %(expert)s),
       {open_work_sql(c.id)}
FROM {c}
WHERE {c.slug} = %(slug)s""",
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
    held: int = 0  # held back by the routing budget (estimation.routing.services)


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
    row for each (`exports.formats.base._labels` reads them from the labels' side: the labels
    whose item is in the campaign); the dashboard counts them as "final labels"."""
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
                filter=lease_live(now, prefix="assignments__"),
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
        Assignment.objects.filter(lease_live(now), item__campaign=campaign)
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
