"""Reads of the adjudication app; permission checks live in the `*_for_user` selectors.

Blindness: a case (and with it every judgement of its item) is visible to admins and to the
campaign's adjudicators who did not grade the item; an item's own expert sees the other
judgement only once the case is returned to the experts or the label is final.
"""

from __future__ import annotations

from decimal import Decimal

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied
from django.db.models import Prefetch, Q, QuerySet
from django.http import Http404

from adjudication.models import AdjudicationCase, CaseEvent, CaseStatus, FinalLabel
from adjudication.overlay import Mark, overlay
from annotation.models import (
    Campaign,
    CampaignMember,
    CampaignStatus,
    ErrorSpan,
    Grade,
    GradeStatus,
    Item,
    MemberRole,
)
from annotation.scales import scale_spec
from core.roles import Role, has_role
from core.visibility import BlindWork, blind_to_proof, ensure_not_blind, without_blind_proofs
from rubrics.structure import Scheme


def adjudicator_campaign_ids(user: AbstractBaseUser) -> set[int] | None:
    """Campaigns the user may adjudicate in: None means every campaign (admins and members
    of the adjudicator group); otherwise those where they are an adjudicator member."""
    if has_role(user, Role.ADMIN, Role.ADJUDICATOR):
        return None
    return set(
        CampaignMember.objects.filter(user=user, role=MemberRole.ADJUDICATOR).values_list(
            "campaign_id", flat=True
        )
    )


AGREEMENT_READERS = (Role.ADMIN, Role.RESEARCHER)


def agreement_campaign_for_user(
    user: AbstractBaseUser, slug: str, what: str = "this campaign's agreement figures"
) -> Campaign:
    """The campaign whose agreement figures `user` asks for (page and API alike): admins and
    researchers read them; a researcher who is also an expert of the campaign only once it is
    closed, since the figures are made of judgements of items not yet final."""
    campaign = Campaign.objects.filter(slug=slug).first()
    if campaign is None:
        raise Http404("No such campaign.")
    if not has_role(user, *AGREEMENT_READERS):
        raise PermissionDenied("Agreement figures are for admins and researchers.")
    campaign_blind_check(user, campaign, what)
    if has_role(user, Role.ADMIN):
        return campaign
    grading = CampaignMember.objects.filter(campaign=campaign, user=user, role=MemberRole.EXPERT)
    if campaign.status == CampaignStatus.OPEN and grading.exists():
        raise PermissionDenied(
            "You grade in this campaign: its agreement figures open to you once it is closed."
        )
    return campaign


def campaign_blind_check(user: AbstractBaseUser, campaign: Campaign, what: str) -> None:
    """403 (core.visibility.BlindWork) when `user` holds blind a proof of one of the campaign's
    items: its pages of figures, labels and scores show them."""
    ensure_not_blind(user, Item.objects.filter(campaign=campaign), what)


def may_adjudicate(user: AbstractBaseUser) -> bool:
    ids = adjudicator_campaign_ids(user)
    return ids is None or bool(ids)


def item_grader_ids(item_id: int) -> set[int]:
    """Everyone who holds a grade (draft or submitted) of the item."""
    return set(Grade.objects.filter(item_id=item_id).values_list("expert_id", flat=True))


def user_may_adjudicate_item(user: AbstractBaseUser, *, campaign_id: int, item_id: int) -> bool:
    ids = adjudicator_campaign_ids(user)
    if ids is not None and campaign_id not in ids:
        return False
    return user.pk not in item_grader_ids(item_id)


def cases_for_user(
    user: AbstractBaseUser,
    *,
    status: str | None = None,
    campaign_id: int | None = None,
    mine: bool = False,
) -> QuerySet[AdjudicationCase]:
    """The queue: unresolved cases by default, largest disagreement first; never a case on an
    item the user graded, nor on a proof they hold blind as an expert (core.visibility)."""
    ids = adjudicator_campaign_ids(user)
    qs = AdjudicationCase.objects.select_related(
        "item__campaign", "item__proof__problem", "assigned_to"
    ).exclude(item__grades__expert=user)
    if ids is not None:
        qs = qs.filter(item__campaign_id__in=ids)
    qs = qs.filter(status=status) if status else qs.exclude(status=CaseStatus.RESOLVED)
    if campaign_id:
        qs = qs.filter(item__campaign_id=campaign_id)
    if mine:
        qs = qs.filter(assigned_to=user)
    qs = without_blind_proofs(user, qs, proof="item__proof")
    return qs.order_by("-disagreement", "created_at", "id")


def next_case_for_user(user: AbstractBaseUser, *, after: AdjudicationCase) -> int | None:
    """The id of the case to take up after `after`: the first case of the queue waiting for a
    decision (not returned to the experts) that is the user's or nobody's yet, `after` aside."""
    return (
        cases_for_user(user)
        .filter(status__in=[CaseStatus.OPEN, CaseStatus.ASSIGNED])
        .filter(Q(assigned_to=user) | Q(assigned_to__isnull=True))
        .exclude(pk=after.pk)
        .values_list("pk", flat=True)
        .first()
    )


def _case_qs() -> QuerySet[AdjudicationCase]:
    grades = Grade.objects.filter(status=GradeStatus.SUBMITTED).order_by("id")
    return AdjudicationCase.objects.select_related(
        "item__campaign",
        "item__proof__problem",
        "item__scheme",
        "item__final_label",
        "assigned_to",
        "resolved_by",
        "accepted_grade",
    ).prefetch_related(
        Prefetch("item__grades", queryset=grades, to_attr="submitted_grades"),
        Prefetch(
            "item__submitted_grades__spans",
            queryset=ErrorSpan.objects.order_by("start", "end", "id"),
        ),
        Prefetch("events", queryset=CaseEvent.objects.select_related("actor").order_by("id")),
        "spans",
    )


def case_for_adjudicator(user: AbstractBaseUser, case_id: int) -> AdjudicationCase:
    """The case with its judgements, for an admin or an eligible adjudicator; otherwise 404
    (a grader guessing the URL learns nothing, not even that the case exists)."""
    case = _case_qs().filter(pk=case_id).first()
    if case is None or not user_may_adjudicate_item(
        user, campaign_id=case.item.campaign_id, item_id=case.item_id
    ):
        raise Http404("No such case.")
    if blind_to_proof(user, case.item.proof_id):
        raise BlindWork(
            "You grade blind: this case's proof is one you hold as an expert and have not "
            "graded. The case opens to you once you have submitted your grade."
        )
    return case


def case_for_expert(user: AbstractBaseUser, case_id: int) -> AdjudicationCase:
    """The case as one of the item's own experts sees it: only once it is returned to them
    (or the label is final); otherwise 404."""
    case = _case_qs().filter(pk=case_id).first()
    if case is None or user.pk not in item_grader_ids(case.item_id):
        raise Http404("No such case.")
    if not (
        case.status == CaseStatus.RETURNED or case.item.judgements_visible or case.item.is_final
    ):
        raise Http404("No such case.")
    return case


def returned_cases_for_expert(user: AbstractBaseUser) -> QuerySet[AdjudicationCase]:
    return (
        AdjudicationCase.objects.filter(status=CaseStatus.RETURNED, item__grades__expert=user)
        .select_related("item__campaign", "item__proof__problem")
        .distinct()
        .order_by("-updated_at")
    )


def final_labels(
    *,
    campaign_id: int | None = None,
    source: str | None = None,
    user: AbstractBaseUser | None = None,
) -> QuerySet[FinalLabel]:
    """Final labels; for `user`, without the labels of the proofs they hold blind (of any
    campaign: the closed campaign of imported ratings too; core.visibility)."""
    qs = FinalLabel.objects.select_related("item__campaign", "item__proof__problem")
    if user is not None:
        qs = without_blind_proofs(user, qs, proof="item__proof")
    if campaign_id:
        qs = qs.filter(item__campaign_id=campaign_id)
    if source:
        qs = qs.filter(source=source)
    return qs.order_by("item_id")


def anonymous_names(grades: list[Grade]) -> dict[int, str]:
    """Expert A, Expert B, ... by grade order (never by user)."""
    return {g.pk: f"Expert {chr(ord('A') + i)}" for i, g in enumerate(grades)}


def eligible_adjudicators(*, campaign_id: int, item_id: int) -> list[AbstractBaseUser]:
    users = get_user_model().objects.filter(
        Q(groups__name__in=[Role.ADJUDICATOR.value])
        | Q(
            campaign_memberships__campaign_id=campaign_id,
            campaign_memberships__role=MemberRole.ADJUDICATOR,
        )
    )
    graders = item_grader_ids(item_id)
    return [u for u in users.distinct().order_by("username") if u.pk not in graders]


def case_sheet(case: AdjudicationCase) -> dict:
    """What the case page shows, anonymised: judgements side by side (Expert A, B, ...), the
    checkpoint awards with the differing rows marked, every expert's spans over the proof (as
    segments of its source, and as `marks` that the page lays over the rendered proof); a
    band scheme (IMO-ProofBench guidelines) as its bands, which its raw text does not show."""
    grades = list(case.item.submitted_grades)
    names = anonymous_names(grades)
    letters = {g.pk: names[g.pk].rsplit(" ", 1)[1].lower() for g in grades}
    taxonomy = case.item.campaign.taxonomy_labels()
    scheme = None
    if case.item.scheme is not None and case.item.scheme.structure:
        scheme = Scheme.from_dict(case.item.scheme.structure)
    titles = {cp.id: cp.title for cp in scheme.leaves()} if scheme else {}
    ids = list(titles)
    for grade in grades:
        ids.extend(key for key in grade.awards if key not in ids)
    award_rows = []
    for checkpoint_id in ids:
        values = [grade.awards.get(checkpoint_id) for grade in grades]
        shown = [str(v) if v not in (None, "") else "0" for v in values]
        award_rows.append(
            {
                "id": checkpoint_id,
                "title": titles.get(checkpoint_id, ""),
                "values": shown,
                "differs": len({Decimal(v) for v in shown}) > 1,
            }
        )
    layers = {
        letters[g.pk]: [
            Mark(s.start, s.end, f"{taxonomy.get(s.category, s.category)}: {s.note}".strip(": "))
            for s in g.spans.all()
        ]
        for g in grades
    }
    adjudicated = list(case.spans.all())
    if adjudicated:
        layers["new"] = [
            Mark(s.start, s.end, f"{taxonomy.get(s.category, s.category)}: {s.note}".strip(": "))
            for s in adjudicated
        ]
    judgements = [
        {
            "grade": g,
            "name": names[g.pk],
            "letter": letters[g.pk],
            "spans": [
                {"span": s, "category": taxonomy.get(s.category, s.category)} for s in g.spans.all()
            ],
        }
        for g in grades
    ]
    by_expert = {g.expert_id: names[g.pk] for g in grades}
    events = [
        {
            "event": e,
            "who": by_expert.get(e.actor_id) or (e.actor.get_username() if e.actor else ""),
        }
        for e in case.events.all()
    ]
    return {
        "adjudicated_spans": [
            {"span": s, "category": taxonomy.get(s.category, s.category)} for s in adjudicated
        ],
        "events": events,
        "judgements": judgements,
        "award_rows": award_rows,
        "differing_rows": [row for row in award_rows if row["differs"]],
        "segments": overlay(case.item.proof.text, layers),
        "marks": [
            {"start": m.start, "end": m.end, "layer": layer, "title": m.title}
            for layer, found in layers.items()
            for m in found
        ],
        "leaves": scheme.leaves() if scheme else [],
        "band_scheme": scheme if scheme and scheme.bands else None,
        "taxonomy": case.item.campaign.error_taxonomy,
        "scale_values": scale_spec(case.item.campaign.scale).values,
    }
