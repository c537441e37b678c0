"""Working a case: assignment rules, resolution, return with a question, the log, concurrency."""

import threading
from decimal import Decimal

import pytest
from django.db import connection, connections

from adjudication.models import AdjudicationCase, CaseStatus, FinalLabel
from adjudication.services import (
    AdjudicationError,
    case_assign,
    case_comment,
    case_resolve,
    case_return,
)
from annotation.models import CampaignMember, Item
from tests.adjudication.factories import ItemFactory, judge
from tests.annotation.factories import approved_scheme
from tests.factories import UserFactory


def disputed_case(scores=(1, 6)):
    item = ItemFactory()
    grades = judge(item, *scores)
    return AdjudicationCase.objects.get(item=item), grades


@pytest.mark.django_db
def test_an_adjudicator_is_never_one_of_the_items_graders():
    case, grades = disputed_case()
    grader = grades[0].expert
    grader.groups.add(*UserFactory(roles=["adjudicator"]).groups.all())
    admin = UserFactory(roles=["admin"])
    with pytest.raises(AdjudicationError, match="own graders"):
        case_assign(case=case, adjudicator=grader, by=admin)
    with pytest.raises(AdjudicationError, match="own graders"):
        case_resolve(case=case, user=grader, action="accept", grade_id=grades[0].pk)
    assert AdjudicationCase.objects.get(pk=case.pk).status == CaseStatus.OPEN


@pytest.mark.django_db
def test_campaign_adjudicator_members_may_adjudicate_only_their_campaign():
    case, _ = disputed_case()
    member = UserFactory()
    admin = UserFactory(roles=["admin"])
    with pytest.raises(AdjudicationError, match="not an adjudicator"):
        case_assign(case=case, adjudicator=member, by=admin)
    CampaignMember.objects.create(campaign=case.item.campaign, user=member, role="adjudicator")
    case = case_assign(case=case, adjudicator=member, by=admin)
    assert (case.status, case.assigned_to) == (CaseStatus.ASSIGNED, member)
    case = case_assign(case=case, adjudicator=None, by=admin)
    assert (case.status, case.assigned_to) == (CaseStatus.OPEN, None)


@pytest.mark.django_db
def test_accepting_a_judgement_makes_an_adjudicated_label():
    case, (a, b) = disputed_case()
    adjudicator = UserFactory(roles=["adjudicator"])
    case_resolve(case=case, user=adjudicator, action="accept", grade_id=b.pk)
    case.refresh_from_db()
    assert (case.status, case.resolution, case.accepted_grade_id) == ("resolved", "accepted", b.pk)
    label = FinalLabel.objects.get(item=case.item)
    assert (label.value, label.source, label.grade_ids, label.case_id) == (
        Decimal("6"),
        "adjudication",
        [b.pk],
        case.pk,
    )
    assert label.policy == "adjudication: accepted the judgement of Expert B"
    assert Item.objects.get(pk=case.item_id).is_final
    assert list(case.events.values_list("kind", flat=True)) == ["opened", "resolved"]


@pytest.mark.django_db
def test_a_new_score_needs_a_rationale_and_a_score_on_the_scale():
    case, _ = disputed_case()
    Item.objects.filter(pk=case.item_id).update(scheme=approved_scheme(case.item.proof.problem))
    case.refresh_from_db()
    adjudicator = UserFactory(roles=["adjudicator"])
    with pytest.raises(AdjudicationError, match="rationale"):
        case_resolve(case=case, user=adjudicator, action="new_score", score=3, rationale=" ")
    with pytest.raises(AdjudicationError, match="not on the 0-7"):
        case_resolve(case=case, user=adjudicator, action="new_score", score=8, rationale="x")
    text = case.item.proof.text
    with pytest.raises(AdjudicationError, match="span 1: unknown error category"):
        case_resolve(
            case=case,
            user=adjudicator,
            action="new_score",
            score=3,
            rationale="x",
            spans=[{"start": 0, "end": 4, "category": "nonsense"}],
        )
    with pytest.raises(AdjudicationError, match="outside the proof"):
        case_resolve(
            case=case,
            user=adjudicator,
            action="new_score",
            score=3,
            rationale="x",
            spans=[{"start": 0, "end": len(text) + 1, "category": "other"}],
        )
    case_resolve(
        case=case,
        user=adjudicator,
        action="new_score",
        score=3,
        rationale="Lemma 2 is asserted, not proved.",
        awards={"c1": 1},
        spans=[{"start": 0, "end": 5, "category": "skipped_steps", "note": "here"}],
    )
    case.refresh_from_db()
    assert (case.resolution, case.score, case.awards) == ("new_score", Decimal("3"), {"c1": "1"})
    assert [(s.quote, s.category) for s in case.spans.all()] == [(text[:5], "skipped_steps")]
    label = FinalLabel.objects.get(item=case.item)
    assert (label.value, label.source, label.policy) == (
        Decimal("3"),
        "adjudication",
        "adjudication: new score by the adjudicator",
    )
    assert case.events.last().text == "Lemma 2 is asserted, not proved."
    with pytest.raises(AdjudicationError, match="already resolved"):
        case_resolve(case=case, user=adjudicator, action="new_score", score=4, rationale="y")


@pytest.mark.django_db
def test_returning_needs_a_question_reveals_the_judgements_and_opens_the_thread():
    case, (a, b) = disputed_case()
    adjudicator = UserFactory(roles=["adjudicator"])
    with pytest.raises(AdjudicationError, match="experts can comment only once"):
        case_comment(case=case, user=a.expert, text="hello")
    with pytest.raises(AdjudicationError, match="question"):
        case_return(case=case, user=adjudicator, question="")
    case_return(case=case, user=adjudicator, question="Is step 3 justified?")
    case.refresh_from_db()
    assert (case.status, case.assigned_to) == (CaseStatus.RETURNED, adjudicator)
    assert Item.objects.get(pk=case.item_id).judgements_visible
    case_comment(case=case, user=a.expert, text="Step 3 follows from Lemma 1.")
    stranger = UserFactory(roles=["expert"])
    with pytest.raises(AdjudicationError):
        case_comment(case=case, user=stranger, text="me too")
    kinds = list(case.events.values_list("kind", "text"))
    assert kinds[-2:] == [
        ("returned", "Is step 3 justified?"),
        ("comment", "Step 3 follows from Lemma 1."),
    ]


@pytest.mark.django_db(transaction=True)
def test_two_adjudicators_resolving_at_once_yield_one_resolution():
    case, (a, b) = disputed_case()
    adjudicators = [UserFactory(roles=["adjudicator"]) for _ in range(2)]
    barrier = threading.Barrier(2)
    outcomes, pids = [], set()

    def resolve(user, grade):
        try:
            barrier.wait(timeout=10)
            case_resolve(case=case, user=user, action="accept", grade_id=grade.pk)
            outcomes.append(("ok", user.pk))
        except AdjudicationError as exc:
            outcomes.append(("refused", str(exc)))
        finally:
            pids.add(connection.connection.info.backend_pid)
            connections.close_all()

    threads = [
        threading.Thread(target=resolve, args=(adjudicators[0], a)),
        threading.Thread(target=resolve, args=(adjudicators[1], b)),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert len(pids) == 2  # two connections, two backends
    assert sorted(kind for kind, _ in outcomes) == ["ok", "refused"]
    winner = next(pk for kind, pk in outcomes if kind == "ok")
    refused = next(text for kind, text in outcomes if kind == "refused")
    assert "already resolved" in refused
    case.refresh_from_db()
    assert case.resolved_by_id == winner
    assert case.events.filter(kind="resolved").count() == 1
    label = FinalLabel.objects.get(item=case.item)
    assert label.grade_ids == [case.accepted_grade_id]


@pytest.mark.django_db
def test_awards_are_checked_as_a_graders_are_one_band_worth_the_score(real_fixtures):
    """The adjudicator's awards go through the graders' rule (rubrics.structure.check_awards):
    checkpoints at their levels, and on a band scheme (IMO-ProofBench's guidelines) one band,
    whose points are the score recorded."""
    import csv

    from rubrics.structure import parse_scheme

    with (real_fixtures / "imobench" / "proofbench_v2.csv").open(newline="") as handle:
        row = next(r for r in csv.DictReader(handle) if r["Problem ID"] == "PB-Basic-001")
    case, _ = disputed_case()
    bands, _ = parse_scheme(row["Grading guidelines"], "imobench_guidelines")
    scheme = approved_scheme(case.item.proof.problem)
    scheme.structure = bands.to_dict()
    scheme.save()
    Item.objects.filter(pk=case.item_id).update(scheme=scheme)
    case.refresh_from_db()
    adjudicator = UserFactory(roles=["adjudicator"])
    resolve = dict(case=case, user=adjudicator, action="new_score", rationale="Gap in step 2.")
    with pytest.raises(AdjudicationError, match="pick one band, not several"):
        case_resolve(**resolve, score=6, awards={"almost": 6, "partial": 1})
    with pytest.raises(AdjudicationError, match="the Partial band gives 1, not the score 6"):
        case_resolve(**resolve, score=6, awards={"partial": 1})
    with pytest.raises(AdjudicationError, match="c1 is not a band"):
        case_resolve(**resolve, score=6, awards={"c1": 1})
    case_resolve(**resolve, score=6, awards={"almost": 6})
    case.refresh_from_db()
    assert (case.score, case.awards) == (Decimal("6"), {"almost": "6"})
