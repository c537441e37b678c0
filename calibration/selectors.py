"""Reads of calibration: the gold feedback after a submission, and errors against gold.

An error is the expert's submitted score minus the gold label, both on the campaign scale.
Gold comes from two places: the copies of a calibration round (the label of the item they
copy) and the gold items mixed unannounced into real campaigns (their own label). Bias and
mean absolute error are adjudication.agreement's (the one bias of the project).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied
from django.db.models import Count, QuerySet
from django.http import Http404

from adjudication import agreement
from adjudication.models import FinalLabel, LabelSource, Resolution
from adjudication.services.gold import GOLD_SOURCES
from annotation.models import (
    Assignment,
    Campaign,
    CampaignMember,
    Grade,
    GradeStatus,
    Item,
    MemberRole,
    TaskKind,
)
from calibration.models import CalibrationItem, CalibrationRequirement, CalibrationRetake
from core.roles import Role, has_role
from rubrics.structure import AwardError, Scheme

BLOCK_SIZE = 10  # successive submissions per point of the "over time" series


# Gold items that can form a round


def gold_candidates(*, campaign: Campaign | None = None) -> QuerySet[Item]:
    """Proof-grading items whose final label can serve as gold (adjudication, agreement or
    import), outside calibration rounds, with what the selection page shows."""
    items = Item.objects.filter(
        final_label__source__in=GOLD_SOURCES,
        analysis__isnull=True,
        campaign__is_calibration=False,
        campaign__task_kind=TaskKind.PROOF_GRADING,
    )
    if campaign is not None:
        items = items.filter(campaign=campaign)
    return items.select_related("campaign", "proof__problem", "final_label").order_by(
        "campaign_id", "id"
    )


def calibration_rounds() -> QuerySet[Campaign]:
    return Campaign.objects.filter(is_calibration=True).order_by("-created_at")


# Gold feedback after a submission


@dataclass
class SchemeLine:
    id: str
    title: str
    kind: str  # "award", "deduction" or "band"
    gold: str
    yours: str

    @property
    def differs(self) -> bool:
        return self.gold != self.yours


@dataclass
class GoldFeedback:
    item: Item
    score: Decimal
    gold: Decimal
    source: str
    rationale: str
    decided_by: str
    lines: list[SchemeLine] = field(default_factory=list)

    @property
    def error(self) -> Decimal:
        return self.score - self.gold

    def as_dict(self) -> dict:
        return {
            "item": self.item.pk,
            "score": self.score,
            "gold": self.gold,
            "error": self.error,
            "source": self.source,
            "rationale": self.rationale,
            "decided_by": self.decided_by,
            "scheme_items": [
                {
                    "id": ln.id,
                    "title": ln.title,
                    "kind": ln.kind,
                    "gold": ln.gold,
                    "yours": ln.yours,
                }
                for ln in self.lines
            ],
        }


def _gold_grade_choices(label: FinalLabel) -> tuple[dict, list]:
    """The awards and deductions behind a gold label: the adjudicator's new score, the grade
    they accepted, or else the first judgement the label was derived from (agreement, import)."""
    case = label.case
    if case is not None and case.resolution == Resolution.NEW_SCORE:
        return dict(case.awards or {}), []
    grade = None
    if case is not None and case.accepted_grade_id is not None:
        grade = case.accepted_grade
    elif label.grade_ids:
        grade = Grade.objects.filter(pk__in=label.grade_ids).order_by("id").first()
    if grade is None:
        return {}, []
    return dict(grade.awards or {}), list(grade.deductions or [])


def _points(value) -> str:
    return "" if value in (None, "") else format(Decimal(str(value)).normalize(), "f")


def _scheme_lines(
    item: Item, gold: tuple[dict, list], yours: tuple[dict, list]
) -> list[SchemeLine]:
    """The scheme's items that either side awarded or deducted, gold beside the expert's."""
    if not item.scheme_id or not item.scheme.structure:
        return []
    try:
        scheme = Scheme.from_dict(item.scheme.structure)
    except (AwardError, ValueError, KeyError):
        return []
    lines: list[SchemeLine] = []
    (gold_awards, gold_ded), (your_awards, your_ded) = gold, yours
    if scheme.bands:
        for band in scheme.bands:
            if band.id in gold_awards or band.id in your_awards:
                lines.append(
                    SchemeLine(
                        band.id,
                        band.name,
                        "band",
                        _points(gold_awards.get(band.id)),
                        _points(your_awards.get(band.id)),
                    )
                )
        return lines
    for cp in scheme.all_checkpoints():
        if cp.children or (cp.id not in gold_awards and cp.id not in your_awards):
            continue
        lines.append(
            SchemeLine(
                cp.id,
                cp.title,
                "award",
                _points(gold_awards.get(cp.id, 0)),
                _points(your_awards.get(cp.id, 0)),
            )
        )
    for deduction in scheme.deductions:
        if deduction.id in gold_ded or deduction.id in your_ded:
            lines.append(
                SchemeLine(
                    deduction.id,
                    deduction.text,
                    "deduction",
                    "applied" if deduction.id in gold_ded else "",
                    "applied" if deduction.id in your_ded else "",
                )
            )
    return lines


def gold_feedback_for_user(*, item_id: int, user: AbstractBaseUser) -> GoldFeedback:
    """What the expert sees after submitting a calibration item: the gold score, the
    adjudicator's rationale and the scheme items that decided it, beside their own. Only for
    the expert's own submitted grade (Http404 otherwise: nothing leaks before submission)."""
    copy = (
        CalibrationItem.objects.filter(item_id=item_id)
        .select_related(
            "item__campaign",
            "item__scheme",
            "item__proof__problem",
            "source__final_label__case__accepted_grade",
            "source__final_label__case__resolved_by",
        )
        .first()
    )
    if copy is None:
        raise Http404("This item is not part of a calibration round.")
    grade = Grade.objects.filter(
        item_id=item_id, expert_id=user.pk, status=GradeStatus.SUBMITTED
    ).first()
    if grade is None:
        raise Http404("Submit your grade first: the gold answer is shown after it.")
    label = getattr(copy.source, "final_label", None)
    if label is None:
        raise Http404("The gold item lost its final label.")
    case = label.case
    rationale = case.rationale if case is not None else ""
    decided_by = ""
    if case is not None and case.resolved_by is not None:
        decided_by = case.resolved_by.get_username()
    if label.source == LabelSource.IMPORTED and not rationale:
        rationale = label.policy
    yours = (dict(grade.awards or {}), list(grade.deductions or []))
    return GoldFeedback(
        item=copy.item,
        score=grade.score,
        gold=label.value,
        source=label.get_source_display(),
        rationale=rationale,
        decided_by=decided_by,
        lines=_scheme_lines(copy.item, _gold_grade_choices(label), yours),
    )


# Errors against gold and the report


@dataclass(frozen=True)
class GoldError:
    expert_id: int
    username: str
    submitted_at: datetime
    item_id: int
    campaign: str
    calibration: bool
    problem: str
    topic: str
    score: float
    gold: float

    @property
    def error(self) -> float:
        return self.score - self.gold


_COMMON = (
    "expert_id",
    "expert__username",
    "submitted_at",
    "item_id",
    "item__campaign__slug",
    "item__proof__problem__external_id",
    "item__proof__problem__topic",
    "score",
)


def gold_errors(*, expert_id: int | None = None, round: Campaign | None = None) -> list[GoldError]:
    """Every submitted grade checked against gold (two queries), oldest first: a calibration
    round's copies, and gold items mixed into real campaigns (not with `round`)."""
    grades = Grade.objects.filter(status=GradeStatus.SUBMITTED, score__isnull=False)
    if expert_id is not None:
        grades = grades.filter(expert_id=expert_id)
    copies = grades.filter(
        item__campaign__is_calibration=True,
        item__calibration__source__final_label__isnull=False,
    )
    if round is not None:
        copies = copies.filter(item__campaign=round)
    rows = [
        (True, values)
        for values in copies.values_list(*_COMMON, "item__calibration__source__final_label__value")
    ]
    if round is None:
        mixed = grades.filter(
            item__is_gold=True,
            item__campaign__is_calibration=False,
            item__final_label__source__in=GOLD_SOURCES,
        )
        rows += [
            (False, values) for values in mixed.values_list(*_COMMON, "item__final_label__value")
        ]
    errors = [
        GoldError(
            expert_id=v[0],
            username=v[1],
            submitted_at=v[2],
            item_id=v[3],
            campaign=v[4],
            calibration=calibration,
            problem=v[5],
            topic=v[6] or "",
            score=float(v[7]),
            gold=float(v[8]),
        )
        for calibration, v in rows
    ]
    errors.sort(key=lambda e: (e.submitted_at, e.item_id))
    return errors


@dataclass
class ErrorStats:
    key: str
    n: int
    bias: float | None
    mae: float | None


def error_stats(key: str, errors: list[GoldError]) -> ErrorStats:
    scores = [e.score for e in errors]
    gold = [e.gold for e in errors]
    return ErrorStats(
        key=key,
        n=len(errors),
        bias=agreement.bias(scores, gold),
        mae=agreement.mean_absolute_difference(scores, gold),
    )


TOPICS = {"A": "Algebra", "C": "Combinatorics", "G": "Geometry", "N": "Number theory"}


@dataclass
class ExpertReport:
    expert_id: int
    username: str
    overall: ErrorStats
    by_block: list[ErrorStats]
    by_week: list[ErrorStats]
    by_topic: list[ErrorStats]
    errors: list[GoldError]


def expert_report(expert_id: int, username: str, errors: list[GoldError]) -> ExpertReport:
    """Bias and MAE overall, over successive blocks of BLOCK_SIZE submissions, by ISO week of
    submission and by the problem's topic."""
    weeks: dict[str, list[GoldError]] = defaultdict(list)
    topics: dict[str, list[GoldError]] = defaultdict(list)
    for e in errors:
        year, week, _ = e.submitted_at.isocalendar()
        weeks[f"{year}-W{week:02d}"].append(e)
        topics[TOPICS.get(e.topic, e.topic or "No topic")].append(e)
    blocks = [
        error_stats(
            f"{start + 1}-{min(start + BLOCK_SIZE, len(errors))}",
            errors[start : start + BLOCK_SIZE],
        )
        for start in range(0, len(errors), BLOCK_SIZE)
    ]
    return ExpertReport(
        expert_id=expert_id,
        username=username,
        overall=error_stats("all", errors),
        by_block=blocks,
        by_week=[error_stats(key, weeks[key]) for key in sorted(weeks)],
        by_topic=[error_stats(key, topics[key]) for key in sorted(topics)],
        errors=errors,
    )


def _stats_dict(stats: ErrorStats) -> dict:
    return {"key": stats.key, "n": stats.n, "bias": stats.bias, "mae": stats.mae}


def report_as_dict(report: ExpertReport) -> dict:
    """The report for JSON (API and download): figures, then one row per gold-checked grade."""
    return {
        "expert": report.username,
        "block_size": BLOCK_SIZE,
        "overall": _stats_dict(report.overall),
        "by_block": [_stats_dict(s) for s in report.by_block],
        "by_week": [_stats_dict(s) for s in report.by_week],
        "by_topic": [_stats_dict(s) for s in report.by_topic],
        "grades": [
            {
                "submitted_at": e.submitted_at,
                "item": e.item_id,
                "campaign": e.campaign,
                "calibration_round": e.calibration,
                "problem": e.problem,
                "topic": e.topic,
                "score": e.score,
                "gold": e.gold,
                "error": e.error,
            }
            for e in report.errors
        ],
    }


def reports(*, expert_id: int | None = None) -> list[ExpertReport]:
    """One report per expert with gold-checked grades (all experts, or one)."""
    by_expert: dict[int, list[GoldError]] = defaultdict(list)
    names: dict[int, str] = {}
    for e in gold_errors(expert_id=expert_id):
        by_expert[e.expert_id].append(e)
        names[e.expert_id] = e.username
    return [
        expert_report(pk, names[pk], by_expert[pk])
        for pk in sorted(by_expert, key=lambda pk: names[pk])
    ]


def report_for_user(*, username: str, user: AbstractBaseUser) -> ExpertReport:
    """An expert's report: admins see anyone's, experts only their own."""
    if username != user.get_username() and not has_role(user, Role.ADMIN):
        raise PermissionDenied("You may see your own calibration report only.")
    expert = get_user_model().objects.filter(username=username).first()
    if expert is None:
        raise Http404("No such expert.")
    found = reports(expert_id=expert.pk)
    return found[0] if found else expert_report(expert.pk, username, [])


# The requirement of a campaign and who passed it


@dataclass
class RequirementRow:
    """An expert of the campaign: the round they are checked on (the requirement's, or a new
    round an admin gave them), their figures there now, the gold items of it they have not had
    yet (`left`), and their pass (on record, or earned and recorded at their next request for
    work). `why` says in words why they are blocked ("" once passed); `stuck`: blocked with no
    gold item left for them, which only an admin can change (a new round)."""

    username: str
    n: int
    mae: float | None
    meets: bool
    passed_at: datetime | None
    passed_mae: Decimal | None
    round: Campaign | None = None
    left: int = 0
    retake: bool = False
    why: str = ""

    @property
    def passed(self) -> bool:
        return self.passed_at is not None or self.meets

    @property
    def stuck(self) -> bool:
        return not self.passed and self.left == 0


def round_figures(round: Campaign) -> dict[int, ErrorStats]:
    """Each expert's figures on the round (one query)."""
    by_expert: dict[int, list[GoldError]] = defaultdict(list)
    for e in gold_errors(round=round):
        by_expert[e.expert_id].append(e)
    return {pk: error_stats(str(pk), errs) for pk, errs in by_expert.items()}


def meets(requirement: CalibrationRequirement, stats: ErrorStats | None) -> bool:
    return (
        stats is not None
        and stats.n >= requirement.min_items
        and stats.mae is not None
        and stats.mae <= float(requirement.max_mae) + 1e-9
    )


def retakes_in_force(requirement: CalibrationRequirement) -> dict[int, CalibrationRetake]:
    """The new rounds given to experts of the requirement, by expert, while it still names the
    round they replace."""
    return {
        retake.expert_id: retake
        for retake in CalibrationRetake.objects.filter(
            requirement=requirement, replaces_id=requirement.round_id
        ).select_related("round")
    }


def round_for_expert(requirement: CalibrationRequirement, expert_id: int) -> Campaign:
    """The round the expert is checked on: a new round given to them, else the requirement's."""
    retake = retakes_in_force(requirement).get(expert_id)
    return retake.round if retake is not None else requirement.round


def _why(requirement: CalibrationRequirement, row: RequirementRow) -> str:
    if row.passed:
        return ""
    needed = requirement.min_items
    if row.n < needed:
        shortfall = f"graded {row.n} of the {needed} gold item{'s' if needed != 1 else ''} needed"
    else:
        shortfall = (
            f"MAE {row.mae:.2f} on {row.n} gold items, over the {requirement.max_mae.normalize()} "
            "allowed"
        )
    if row.left:
        return f"{shortfall}; {row.left} gold item{'s' if row.left != 1 else ''} left in {row.round.name}"
    return f"{shortfall}, and no gold item of {row.round.name} is left to grade"


def _requirement_rows(
    requirement: CalibrationRequirement, members: list[tuple[int, str]]
) -> list[RequirementRow]:
    """The rows of (expert id, username) pairs: a fixed number of queries, and one more per
    round given to an expert."""
    retakes = retakes_in_force(requirement)
    rounds = {requirement.round_id: requirement.round}
    rounds.update({r.round_id: r.round for r in retakes.values()})
    figures = {pk: round_figures(round) for pk, round in rounds.items()}
    sizes = dict(
        Item.objects.filter(campaign_id__in=rounds)
        .values_list("campaign_id")
        .annotate(n=Count("id"))
        .values_list("campaign_id", "n")
    )
    held = {
        (campaign_id, expert_id): n
        for campaign_id, expert_id, n in Assignment.objects.filter(
            item__campaign_id__in=rounds, expert_id__in=[pk for pk, _ in members]
        )
        .values_list("item__campaign_id", "expert_id")
        .annotate(n=Count("id"))
        .values_list("item__campaign_id", "expert_id", "n")
    }
    passes = {p.expert_id: p for p in requirement.passes.all()}
    rows = []
    for expert_id, username in members:
        retake = retakes.get(expert_id)
        round = retake.round if retake is not None else requirement.round
        stats = figures[round.pk].get(expert_id)
        passed = passes.get(expert_id)
        row = RequirementRow(
            username=username,
            n=stats.n if stats else 0,
            mae=stats.mae if stats else None,
            meets=meets(requirement, stats),
            passed_at=passed.passed_at if passed else None,
            passed_mae=passed.mae if passed else None,
            round=round,
            left=sizes.get(round.pk, 0) - held.get((round.pk, expert_id), 0),
            retake=retake is not None,
        )
        row.why = _why(requirement, row)
        rows.append(row)
    return rows


def requirement_status(
    campaign: Campaign,
) -> tuple[CalibrationRequirement | None, list[RequirementRow]]:
    """The campaign's requirement and, for each expert of the campaign, their figures on their
    round, what is left for them there and whether they passed (a fixed number of queries,
    whatever the number of experts, and one more per round given to an expert)."""
    requirement = (
        CalibrationRequirement.objects.filter(campaign=campaign).select_related("round").first()
    )
    if requirement is None:
        return None, []
    members = (
        CampaignMember.objects.filter(campaign=campaign, role=MemberRole.EXPERT)
        .order_by("user__username")
        .values_list("user_id", "user__username")
    )
    return requirement, _requirement_rows(requirement, list(members))


def expert_standing(
    *, campaign: Campaign, expert: AbstractBaseUser
) -> tuple[CalibrationRequirement | None, RequirementRow | None]:
    """The campaign's requirement and where the expert stands on it (None, None without one)."""
    requirement = (
        CalibrationRequirement.objects.filter(campaign=campaign).select_related("round").first()
    )
    if requirement is None:
        return None, None
    (row,) = _requirement_rows(requirement, [(expert.pk, expert.get_username())])
    return requirement, row
