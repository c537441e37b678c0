"""Detection: labels within tolerance by policy, cases beyond it, revisions, manual sending."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from adjudication.models import AdjudicationCase, CaseEvent, CaseStatus, FinalLabel
from adjudication.services import AdjudicationError, case_open_manual, item_evaluate
from annotation.models import Assignment, Grade, GradeStatus, Item
from annotation.services import GradeInput, assignment_create_manual, grade_revise, grade_submit
from tests.adjudication.factories import CampaignFactory, GradeFactory, ItemFactory, judge
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("scale", "tolerance", "policy", "scores", "label", "case"),
    [
        ("0-7", "1", "mean_floor", (5, 6), "5", False),
        ("0-7", "1", "mean_floor", (6, 6), "6", False),
        ("0-7", "1", "lower", (7, 6), "6", False),
        ("0-7", "1", "mean", (4, 5), "4.5", False),
        ("0-7", "1", "mean_floor", (3, 5), None, True),
        ("0-7", "2", "mean_floor", (3, 5), "4", False),
        ("0-7", "0", "mean_floor", (3, 4), None, True),
        ("0-0.5-1", "1", "mean_floor", (0.5, 1), None, True),  # exact on 0/0.5/1
        ("0-0.5-1", "1", "lower", (1, 1), "1", False),
        ("0-0.5-1", "0", "mean", (0, 0), "0", False),
        ("1-4", "1", "mean_floor", (2, 3), "2", False),
        ("1-4", "1", "lower", (1, 3), None, True),
    ],
)
def test_detection_table(scale, tolerance, policy, scores, label, case):
    item = ItemFactory(
        campaign=CampaignFactory(scale=scale, tolerance=Decimal(tolerance), label_policy=policy)
    )
    grades = judge(item, *scores)
    item.refresh_from_db()
    found = FinalLabel.objects.filter(item=item).first()
    if label is None:
        assert found is None
        assert not item.is_final
        opened = AdjudicationCase.objects.get(item=item)
        assert opened.status == CaseStatus.OPEN
        assert opened.opened_reason == "disagreement"
        assert opened.disagreement == abs(Decimal(str(scores[0])) - Decimal(str(scores[1])))
    else:
        assert found.value == Decimal(label)
        assert found.source == "agreement"
        assert found.policy.startswith(policy + ":")
        assert found.scale == scale
        assert found.grade_ids == sorted(g.pk for g in grades)
        assert not item.is_final  # derived from the judgements: revisions stay open
        assert not AdjudicationCase.objects.filter(item=item).exists()
    assert case == AdjudicationCase.objects.filter(item=item).exists()


def test_single_judgement_gives_a_single_label():
    item = ItemFactory(required_judgements=1)
    (grade,) = judge(item, 4)
    label = FinalLabel.objects.get(item=item)
    assert (label.value, label.source, label.grade_ids) == (Decimal("4"), "single", [grade.pk])


def test_nothing_happens_before_all_judgements_are_in():
    item = ItemFactory(required_judgements=2)
    GradeFactory(item=item, score=3)
    GradeFactory(item=item, score=7, status=GradeStatus.DRAFT)
    assert item_evaluate(item_id=item.pk) is None
    assert not FinalLabel.objects.exists() and not AdjudicationCase.objects.exists()


def test_three_judgements_use_the_largest_difference():
    item = ItemFactory(required_judgements=3)
    judge(item, 4, 5, 7)
    assert AdjudicationCase.objects.get(item=item).disagreement == Decimal("3")


def test_one_unresolved_case_per_item_is_a_database_constraint():
    item = ItemFactory()
    judge(item, 0, 7)
    with pytest.raises(IntegrityError), transaction.atomic():
        AdjudicationCase.objects.create(item=item, opened_reason="manual")


def test_repeated_signal_keeps_one_case_and_logs_once_per_evaluation():
    item = ItemFactory()
    judge(item, 0, 7)
    item_evaluate(item_id=item.pk)
    assert AdjudicationCase.objects.filter(item=item).count() == 1
    assert list(CaseEvent.objects.values_list("kind", flat=True)) == ["opened", "revised"]


def _grade_input(score) -> GradeInput:
    return GradeInput(score=Decimal(str(score)), seconds_spent=120)


def test_revision_through_annotation_closes_the_case_as_agreed(django_capture_on_commit_callbacks):
    """The real path: grade_submit and grade_revise send item_judged on commit."""
    admin = UserFactory(roles=["admin"])
    item = ItemFactory()
    experts = [UserFactory(roles=["expert"]) for _ in range(2)]
    for expert, score in zip(experts, (2, 6), strict=True):
        assignment_create_manual(item=item, expert=expert, assigned_by=admin)
        with django_capture_on_commit_callbacks(execute=True):
            grade_submit(item=item, expert=expert, data=_grade_input(score))
    case = AdjudicationCase.objects.get(item=item)
    assert case.disagreement == 4 and not FinalLabel.objects.filter(item=item).exists()

    grade = Grade.objects.get(item=item, expert=experts[0])
    with django_capture_on_commit_callbacks(execute=True):
        grade_revise(grade=grade, user=experts[0], data=_grade_input(4))
    case.refresh_from_db()
    assert case.disagreement == 2 and case.status == CaseStatus.OPEN

    with django_capture_on_commit_callbacks(execute=True):
        grade_revise(grade=grade, user=experts[0], data=_grade_input(5))
    case.refresh_from_db()
    assert (case.status, case.resolution) == (CaseStatus.RESOLVED, "agreed")
    label = FinalLabel.objects.get(item=item)
    assert (label.value, label.source, label.case_id) == (Decimal("5"), "agreement", case.pk)
    assert not Item.objects.get(pk=item.pk).is_final
    kinds = list(case.events.values_list("kind", flat=True))
    assert kinds == ["opened", "revised", "resolved"]


def test_revision_while_returned_puts_the_case_back_to_its_adjudicator():
    adjudicator = UserFactory(roles=["adjudicator"])
    item = ItemFactory()
    a, b = judge(item, 1, 6)
    case = AdjudicationCase.objects.get(item=item)
    case.status, case.assigned_to = CaseStatus.RETURNED, adjudicator
    case.save()
    Grade.objects.filter(pk=a.pk).update(score=3)
    item_evaluate(item_id=item.pk)
    case.refresh_from_db()
    assert (case.status, case.disagreement) == (CaseStatus.ASSIGNED, Decimal("3"))


def test_adjudicated_labels_are_never_overridden_by_detection():
    item = ItemFactory()
    judge(item, 1, 6)
    FinalLabel.objects.create(item=item, value=3, scale="0-7", source="adjudication")
    AdjudicationCase.objects.filter(item=item).update(status="resolved", resolution="new_score")
    item_evaluate(item_id=item.pk)
    assert FinalLabel.objects.get(item=item).value == 3


def test_manual_sending_opens_a_case_on_an_agreed_item_and_keeps_it_open():
    admin = UserFactory(roles=["admin"])
    item = ItemFactory()
    judge(item, 5, 5)
    case = case_open_manual(item=item, user=admin, note="check the induction")
    assert (case.opened_reason, case.opened_by, case.disagreement) == ("manual", admin, 0)
    assert case.events.get().text == "check the induction"
    item_evaluate(item_id=item.pk)  # a re-evaluation does not close a hand-opened case
    case.refresh_from_db()
    assert case.status == CaseStatus.OPEN
    with pytest.raises(AdjudicationError, match="already has an unresolved case"):
        case_open_manual(item=item, user=admin)


def test_manual_sending_needs_a_judgement():
    with pytest.raises(AdjudicationError, match="no submitted judgement"):
        case_open_manual(item=ItemFactory(), user=UserFactory(roles=["admin"]))


def test_gold_judgements_after_the_label_never_change_it():
    """Gold items keep taking judgements once final (annotation); they are checked against the
    label, they do not move it."""
    item = ItemFactory(is_gold=True)
    judge(item, 5, 6)
    GradeFactory(item=item, score=0)
    assert item_evaluate(item_id=item.pk) == FinalLabel.objects.get(item=item).pk
    label = FinalLabel.objects.get(item=item)
    assert (label.value, label.source, len(label.grade_ids)) == (Decimal("5"), "agreement", 2)
    assert not AdjudicationCase.objects.filter(item=item).exists()


def test_gold_grade_through_annotation_keeps_the_label(django_capture_on_commit_callbacks):
    item = ItemFactory(is_gold=True, required_judgements=1)
    judge(item, 7)
    checker = UserFactory(roles=["expert"])
    # Annotation serves final gold items from the queue; the lease is written here directly.
    Assignment.objects.create(
        item=item, expert=checker, leased_until=timezone.now() + timedelta(hours=1)
    )
    with django_capture_on_commit_callbacks(execute=True):
        grade_submit(item=item, expert=checker, data=_grade_input(2))
    label = FinalLabel.objects.get(item=item)
    assert (label.value, label.source) == (Decimal("7"), "single")
    assert not AdjudicationCase.objects.filter(item=item).exists()


def test_setting_a_label_again_replaces_it_in_place_and_keeps_the_item_final():
    from adjudication.services import final_label_set

    item = ItemFactory(required_judgements=1)
    (grade,) = judge(item, 4)
    first = FinalLabel.objects.get(item=item)
    item = Item.objects.select_related("campaign").get(pk=item.pk)
    again = final_label_set(
        item=item, value=Decimal("6"), source="adjudication", policy="by hand", grade_ids=[]
    )
    assert FinalLabel.objects.filter(item=item).count() == 1
    stored = FinalLabel.objects.get(item=item)
    assert stored.pk == first.pk == again
    assert (stored.value, stored.source, stored.policy) == (Decimal("6"), "adjudication", "by hand")
    assert stored.created_at == first.created_at and stored.updated_at > first.updated_at
    assert Item.objects.get(pk=item.pk).is_final


def test_evaluation_reads_scores_of_submitted_judgements_only_oldest_first():
    item = ItemFactory(required_judgements=2)
    GradeFactory(item=item, status=GradeStatus.DRAFT, score=Decimal("0"))
    judge(item, "6.5", 7)  # a draft's score takes no part; 6.5 and 7 agree within 1
    label = FinalLabel.objects.get(item=item)
    grades = list(item.grades.filter(status=GradeStatus.SUBMITTED).order_by("id"))
    assert label.grade_ids == [g.pk for g in grades]
    assert label.source == "agreement" and "6.5" in label.policy


def test_a_revision_re_derives_a_single_label():
    item = ItemFactory(required_judgements=1)
    expert = UserFactory(roles=["expert"])
    assignment_create_manual(item=item, expert=expert, assigned_by=UserFactory(roles=["admin"]))
    grade = grade_submit(item=item, expert=expert, data=_grade_input(3))
    assert FinalLabel.objects.get(item=item).value == Decimal("3")
    grade_revise(grade=grade, user=expert, data=_grade_input(6))
    label = FinalLabel.objects.get(item=item)
    assert (label.value, label.source, label.grade_ids) == (Decimal("6"), "single", [grade.pk])
    assert not Item.objects.get(pk=item.pk).is_final


def test_a_revision_that_breaks_the_agreement_removes_the_label_and_opens_a_case():
    admin = UserFactory(roles=["admin"])
    item = ItemFactory()
    experts = [UserFactory(roles=["expert"]) for _ in range(2)]
    for expert, score in zip(experts, (5, 6), strict=True):
        assignment_create_manual(item=item, expert=expert, assigned_by=admin)
        grade_submit(item=item, expert=expert, data=_grade_input(score))
    assert FinalLabel.objects.get(item=item).source == "agreement"
    grade = Grade.objects.get(item=item, expert=experts[0])
    grade_revise(grade=grade, user=experts[0], data=_grade_input(1))
    assert not FinalLabel.objects.filter(item=item).exists()
    case = AdjudicationCase.objects.get(item=item)
    assert (case.status, case.disagreement) == (CaseStatus.OPEN, Decimal("5"))


def test_an_adjudicated_label_is_final_and_kept_through_re_evaluation():
    from adjudication.services import final_label_set

    item = ItemFactory(required_judgements=1)
    judge(item, 2)
    item = Item.objects.select_related("campaign").get(pk=item.pk)
    final_label_set(item=item, value=Decimal("5"), source="adjudication", policy="", grade_ids=[])
    assert Item.objects.get(pk=item.pk).is_final
    assert item_evaluate(item_id=item.pk) == FinalLabel.objects.get(item=item).pk
    assert FinalLabel.objects.get(item=item).source == "adjudication"
