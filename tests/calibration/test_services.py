"""Calibration services: rounds from gold items, the gold feedback, the report's statistics
with known numbers, the gate before a campaign gives items."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.http import Http404
from django.utils import timezone

from adjudication.models import AdjudicationCase, FinalLabel
from annotation.calibration_gate import CalibrationRequired
from annotation.models import CampaignMember, Grade
from annotation.services import GradeError, GradeInput, assignment_next, grade_revise
from calibration import selectors
from calibration.models import CalibrationItem, CalibrationPass
from calibration.services import (
    CalibrationError,
    calibration_requirement_set,
    calibration_round_create,
)
from tests.annotation.factories import CampaignFactory, ItemFactory, expert_in
from tests.calibration.factories import expert_user, gold_item, gold_round, grade_next

pytestmark = pytest.mark.django_db


def test_round_copies_gold_items_and_pins_their_scheme():
    round, items = gold_round([5, 2])
    assert round.is_calibration and round.gold_rate == 1
    copies = list(CalibrationItem.objects.filter(item__campaign=round).select_related("item"))
    assert sorted(c.source_id for c in copies) == sorted(i.pk for i in items)
    for copy in copies:
        assert copy.item.is_gold and copy.item.scheme_id == copy.source.scheme_id
        assert copy.item.proof_id == copy.source.proof_id


def test_round_refuses_items_without_gold_label_naming_them():
    campaign = CampaignFactory()
    plain = ItemFactory(campaign=campaign)
    with pytest.raises(CalibrationError, match=rf"gold_items: item\(s\) {plain.pk} have no gold"):
        calibration_round_create(name="R", gold_items=[plain], created_by=None)
    with pytest.raises(CalibrationError, match="choose at least one"):
        calibration_round_create(name="R", gold_items=[], created_by=None)


def test_round_refuses_mixed_scales():
    a = gold_item(CampaignFactory(), 3)
    b = gold_item(CampaignFactory(scale="1-4"), 2)
    with pytest.raises(CalibrationError, match="different scales"):
        calibration_round_create(name="R", gold_items=[a, b], created_by=None)


def test_calibration_grades_never_become_labels_or_cases():
    expert = expert_user()
    round, _ = gold_round([5, 2], experts=[expert])
    grade_next(round, expert, 1)
    grade_next(round, expert, 7)
    assert not FinalLabel.objects.filter(item__campaign=round).exists()
    assert not AdjudicationCase.objects.filter(item__campaign=round).exists()
    # every expert goes through every gold item (no slot is "taken" by another)
    other = expert_user()
    grade_next(round, other, 5)
    grade_next(round, other, 2)
    assert Grade.objects.filter(item__campaign=round).count() == 4


def test_gold_feedback_shows_gold_rationale_and_scheme_items():
    expert = expert_user()
    source = CampaignFactory()
    item = gold_item(
        source,
        5,
        rationale="The bound is **right**; equality missing.",
        awards={"c1": "2", "c2": "3"},
    )
    round = calibration_round_create(name="R", gold_items=[item], created_by=None, experts=[expert])
    copy = round.items.get()
    with pytest.raises(Http404, match="Submit your grade first"):
        selectors.gold_feedback_for_user(item_id=copy.pk, user=expert)
    grade_next(round, expert, 4, awards={"c1": "2", "c3": "2"})
    feedback = selectors.gold_feedback_for_user(item_id=copy.pk, user=expert)
    assert (feedback.score, feedback.gold, feedback.error) == (Decimal(4), Decimal(5), Decimal(-1))
    assert feedback.rationale.startswith("The bound is **right**")
    assert feedback.source == "Adjudication" and feedback.decided_by
    lines = {ln.id: (ln.gold, ln.yours) for ln in feedback.lines}
    assert lines == {"c1": ("2", "2"), "c2": ("3", "0"), "c3": ("0", "2")}
    # another expert sees nothing of it
    with pytest.raises(Http404):
        selectors.gold_feedback_for_user(item_id=copy.pk, user=expert_user())


def test_gold_feedback_of_an_accepted_grade_lists_its_deductions():
    expert = expert_user()
    item = gold_item(CampaignFactory(), 2)
    judge = expert_user()
    accepted = Grade.objects.create(
        item=item, expert=judge, status="submitted", score=2, awards={"c2": "3"}, deductions=["d2"]
    )
    AdjudicationCase.objects.filter(item=item).update(
        resolution="accepted", accepted_grade=accepted
    )
    round = calibration_round_create(name="R", gold_items=[item], created_by=None, experts=[expert])
    grade_next(round, expert, 3, awards={"c2": "3"})
    feedback = selectors.gold_feedback_for_user(item_id=round.items.get().pk, user=expert)
    lines = {ln.id: (ln.kind, ln.gold, ln.yours) for ln in feedback.lines}
    assert lines == {"c2": ("award", "3", "3"), "d2": ("deduction", "applied", "")}


def test_calibration_grade_cannot_be_revised():
    expert = expert_user()
    round, _ = gold_round([3], experts=[expert])
    grade = grade_next(round, expert, 3)
    with pytest.raises(GradeError, match="cannot be revised"):
        grade_revise(grade=grade, user=expert, data=GradeInput.from_data({"score": 4}))


def test_report_statistics_with_known_numbers():
    expert = expert_user("known")
    # gold 5, 2, 4 (topics A, G, G); scores 6, 2, 1: errors +1, 0, -3
    round, _ = gold_round([5, 2, 4], experts=[expert], topics=["A", "G", "G"])
    for score in (6, 2, 1):
        grade_next(round, expert, score)
    # a gold item mixed into a real campaign: gold 3, score 5 (+2), a week later
    campaign = CampaignFactory(gold_rate=1)
    gold_item(campaign, 3, topic="N").__class__.objects.filter(campaign=campaign).update(
        is_gold=True
    )
    CampaignMember.objects.create(campaign=campaign, user=expert, role="expert")
    grade_next(campaign, expert, 5)
    later = timezone.now() + timedelta(days=7)
    Grade.objects.filter(item__campaign=campaign).update(submitted_at=later)

    report = selectors.report_for_user(username="known", user=expert)
    assert report.overall.n == 4
    assert report.overall.bias == pytest.approx((1 + 0 - 3 + 2) / 4)
    assert report.overall.mae == pytest.approx((1 + 0 + 3 + 2) / 4)
    topics = {s.key: (s.n, s.bias, s.mae) for s in report.by_topic}
    assert topics["Algebra"] == (1, 1.0, 1.0)
    assert topics["Geometry"] == (2, -1.5, 1.5)
    assert topics["Number theory"] == (1, 2.0, 2.0)
    assert [s.n for s in report.by_week] == [3, 1]
    assert report.by_week[-1].bias == 2.0
    assert [s.key for s in report.by_block] == ["1-4"]
    assert [e.calibration for e in report.errors] == [True, True, True, False]


def test_report_blocks_of_successive_submissions():
    expert = expert_user("blocks")
    values = [3] * (selectors.BLOCK_SIZE + 2)
    round, _ = gold_round(values, experts=[expert])
    for i in range(len(values)):
        grade_next(round, expert, 5 if i < selectors.BLOCK_SIZE else 3)
    report = selectors.report_for_user(username="blocks", user=expert)
    assert [(s.key, s.n, s.bias) for s in report.by_block] == [
        (f"1-{selectors.BLOCK_SIZE}", selectors.BLOCK_SIZE, 2.0),
        (f"{selectors.BLOCK_SIZE + 1}-{selectors.BLOCK_SIZE + 2}", 2, 0.0),
    ]


def test_expert_sees_only_their_own_report():
    expert, other = expert_user("me"), expert_user("them")
    from django.core.exceptions import PermissionDenied

    with pytest.raises(PermissionDenied):
        selectors.report_for_user(username="them", user=expert)
    assert selectors.report_for_user(username="me", user=expert).overall.n == 0
    admin = expert_user("boss")
    admin.is_superuser = True
    admin.save()
    assert selectors.report_for_user(username="them", user=admin).username == other.username


def test_gate_blocks_until_the_threshold_is_met():
    campaign = CampaignFactory()
    ItemFactory(campaign=campaign)
    expert = expert_in(campaign)
    round, _ = gold_round([5, 2, 4])
    calibration_requirement_set(
        campaign=campaign, round=round, max_mae=Decimal("1"), min_items=2, set_by=None
    )
    # the campaign's expert became an expert of the round
    assert CampaignMember.objects.filter(campaign=round, user=expert, role="expert").exists()
    with pytest.raises(CalibrationRequired, match=r"at most 1 on at least 2 gold item") as exc:
        assignment_next(campaign=campaign, expert=expert)
    assert exc.value.standing_url == f"/calibration/campaigns/{campaign.slug}/standing/"
    grade_next(round, expert, 7)  # error +2
    with pytest.raises(CalibrationRequired):
        assignment_next(campaign=campaign, expert=expert)
    grade_next(round, expert, 2)  # error 0: MAE 1 on 2 items
    assert not CalibrationPass.objects.exists()  # submissions pay nothing for the gate
    _, rows = selectors.requirement_status(campaign)
    assert [(r.n, r.mae, r.passed, r.passed_at) for r in rows] == [(2, 1.0, True, None)]
    assert assignment_next(campaign=campaign, expert=expert) is not None
    recorded = CalibrationPass.objects.get(expert=expert)
    assert (recorded.items, recorded.mae) == (2, Decimal("1.000"))


def test_gate_passes_at_once_when_already_met_and_a_new_threshold_asks_again():
    campaign = CampaignFactory()
    ItemFactory(campaign=campaign)
    expert = expert_in(campaign)
    round, _ = gold_round([5, 2], experts=[expert])
    grade_next(round, expert, 6)
    grade_next(round, expert, 2)  # MAE 0.5
    calibration_requirement_set(
        campaign=campaign, round=round, max_mae=Decimal("0.5"), min_items=2, set_by=None
    )
    assert assignment_next(campaign=campaign, expert=expert) is not None
    calibration_requirement_set(
        campaign=campaign, round=round, max_mae=Decimal("0.25"), min_items=2, set_by=None
    )
    other = CampaignFactory()
    ItemFactory(campaign=other)
    requirement, rows = selectors.requirement_status(campaign)
    assert [(r.username, r.n, r.mae, r.passed) for r in rows] == [(expert.username, 2, 0.5, False)]


def test_requirement_refuses_a_round_of_another_scale_and_a_plain_campaign():
    campaign = CampaignFactory(scale="1-4")
    round, _ = gold_round([5])
    with pytest.raises(CalibrationError, match="round: its scale"):
        calibration_requirement_set(
            campaign=campaign, round=round, max_mae=Decimal("1"), min_items=1, set_by=None
        )
    with pytest.raises(CalibrationError, match="is not a calibration round"):
        calibration_requirement_set(
            campaign=CampaignFactory(), round=CampaignFactory(), max_mae=1, min_items=1, set_by=None
        )


def test_an_expert_added_later_joins_the_round():
    from annotation.services import campaign_member_add

    campaign = CampaignFactory()
    round, _ = gold_round([5])
    calibration_requirement_set(campaign=campaign, round=round, max_mae=1, min_items=1, set_by=None)
    newcomer = expert_user()
    campaign_member_add(campaign=campaign, user=newcomer, role="expert")
    assert CampaignMember.objects.filter(campaign=round, user=newcomer, role="expert").exists()


def test_round_grades_stay_out_of_the_source_campaign_agreement():
    from adjudication.metrics import campaign_agreement

    expert = expert_user("outsider")
    round, items = gold_round([5, 2], experts=[expert])
    source = items[0].campaign
    before = campaign_agreement(source)
    grade_next(round, expert, 0)
    grade_next(round, expert, 7)
    after = campaign_agreement(source)
    assert [e["expert"] for e in after.experts] == [e["expert"] for e in before.experts]
    assert after.n_items_multi == before.n_items_multi
    assert "outsider" not in str(after.experts)
    assert list(FinalLabel.objects.filter(item__in=items).values_list("value", flat=True)) == [5, 2]


def test_error_chart_escapes_its_text_and_skips_empty_groups():
    from annotation.plots import error_series_chart

    svg = error_series_chart(
        [{"key": "<w1>", "bias": -2.5, "mae": 2.5}, {"key": "w2", "bias": None, "mae": None}],
        "a <title>",
    )
    assert "&lt;w1&gt;" in svg and "a &lt;title&gt;" in svg and "<w1>" not in svg
    assert svg.count("<circle") == 2  # one point per series, none for the empty group
    assert ">-3</text>" in svg  # the axis reaches past the largest error
