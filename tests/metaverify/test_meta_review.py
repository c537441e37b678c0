"""MetaReview services: the derived A.3 rating, overrides with a reason, drafts, idempotent
submit, revisions with history, blindness, and the rating flowing into adjudication."""

from decimal import Decimal

import pytest

from adjudication.models import AdjudicationCase, FinalLabel
from annotation import services
from annotation.models import GradeRevision, Item, MetaReview
from annotation.review_page import review_view_for_user
from annotation.services.review import (
    MetaReviewInput,
    analysis_items_create,
    meta_review_revise,
    meta_review_save_draft,
    meta_review_submit,
)
from tests.factories import UserFactory
from tests.metaverify.factories import (
    ANALYSIS_TEXT,
    PROOF_TEXT,
    analysis_item,
    defect,
    expert_in,
    review_campaign,
)
from tests.problems.page_factories import VerifierAnalysisFactory

pytestmark = pytest.mark.django_db

GAP = "Step 2 divides by x without checking that x is nonzero."
BOUND = "Step 3 claims the bound for every n but only proves it for even n."


def _taken(item, username=None):
    expert = expert_in(item.campaign, username)
    services.assignment_create_manual(item=item, expert=expert, assigned_by=None)
    return expert


def _data(**fields) -> MetaReviewInput:
    return MetaReviewInput.from_data(fields)


@pytest.mark.parametrize(
    ("defects", "expression", "fits", "rating"),
    [
        ([], False, True, "1"),
        ([], True, True, "0.5"),
        ([], False, False, "0.5"),
        ([(True, True)], False, True, "1"),
        ([(True, True), (True, False)], None, None, "0.5"),
        ([(False, None), (True, False)], None, None, "0"),
        ([(True, True), (True, True)], True, False, "0.5"),
    ],
)
def test_submit_stores_the_rating_derived_by_the_rubric(defects, expression, fits, rating):
    item = analysis_item()
    expert = _taken(item)
    quotes = [GAP, BOUND]
    review = meta_review_submit(
        item=item,
        expert=expert,
        data=_data(
            defects=[
                defect(ANALYSIS_TEXT, quotes[i], exists=e, accurate=a)
                for i, (e, a) in enumerate(defects)
            ],
            expression_error=expression,
            score_fits=fits,
        ),
    )
    assert review.derived_rating == Decimal(rating)
    assert review.value == Decimal(rating)
    assert review.grade.score == Decimal(rating)
    assert review.grade.status == "submitted"
    assert review.defects.count() == len(defects)


def test_submit_says_what_is_missing_and_an_override_needs_a_reason():
    item = analysis_item()
    expert = _taken(item)
    with pytest.raises(services.GradeError) as missing:
        meta_review_submit(
            item=item,
            expert=expert,
            data=_data(defects=[defect(ANALYSIS_TEXT, GAP, exists=True)], score_fits=True),
        )
    assert "defect 1: say whether the analysis describes it accurately" in missing.value.problems
    with pytest.raises(services.GradeError) as no_reason:
        meta_review_submit(
            item=item,
            expert=expert,
            data=_data(expression_error=False, score_fits=True, override="0"),
        )
    assert no_reason.value.problems == [
        "override: give the reason for overriding the derived rating"
    ]
    review = meta_review_submit(
        item=item,
        expert=expert,
        data=_data(
            expression_error=False, score_fits=True, override="0", override_reason="hallucinated"
        ),
    )
    assert (review.derived_rating, review.override, review.value) == (
        Decimal("1"),
        Decimal("0"),
        Decimal("0"),
    )
    assert review.grade.score == Decimal("0")


def test_defects_and_proof_passages_are_anchored_in_their_texts():
    item = analysis_item()
    expert = _taken(item)
    passage = "dividing by $x$ gives the claim."
    drifted = defect(ANALYSIS_TEXT, GAP, exists=True, accurate=True)
    drifted["start"] += 3
    drifted["end"] += 3
    drifted.update(proof_start=0, proof_end=5, proof_quote=passage)
    review = meta_review_save_draft(item=item, expert=expert, data=_data(defects=[drifted]))
    (stored,) = review.defects.all()
    assert ANALYSIS_TEXT[stored.start : stored.end] == GAP
    assert PROOF_TEXT[stored.proof_start : stored.proof_end] == passage
    bad = defect(ANALYSIS_TEXT, GAP)
    bad["quote"] = "text the analysis never wrote"
    with pytest.raises(services.GradeError) as refused:
        meta_review_save_draft(item=item, expert=expert, data=_data(defects=[bad]))
    assert "does not occur in the analysis" in refused.value.problems[0]


def test_draft_keeps_unfinished_work_and_submit_is_idempotent(django_capture_on_commit_callbacks):
    item = analysis_item()
    expert = _taken(item)
    draft = meta_review_save_draft(
        item=item, expert=expert, data=_data(defects=[defect(ANALYSIS_TEXT, GAP, exists=True)])
    )
    assert draft.grade.status == "draft" and draft.value is None
    assert draft.defects.get().exists is True
    data = _data(defects=[defect(ANALYSIS_TEXT, GAP, exists=False)], comment="made up")
    with django_capture_on_commit_callbacks(execute=True):
        first = meta_review_submit(item=item, expert=expert, data=data, submit_key="k")
    again = meta_review_submit(item=item, expert=expert, data=data, submit_key="k")
    assert again.pk == first.pk and again.value == Decimal("0")
    # the same key with other content is another submission: a conflict, never the old review
    with pytest.raises(services.GradeConflict) as other:
        meta_review_submit(item=item, expert=expert, data=_data(), submit_key="k")
    assert other.value.grade.pk == first.grade_id
    assert MetaReview.objects.count() == 1
    label = FinalLabel.objects.get(item=item)
    assert (label.value, label.source) == (Decimal("0"), "single")


def test_two_reviews_that_disagree_open_a_case_and_a_revision_settles_it(
    django_capture_on_commit_callbacks,
):
    item = analysis_item(required_judgements=2)
    a, b = _taken(item, "rev-a"), _taken(item, "rev-b")
    with django_capture_on_commit_callbacks(execute=True):
        meta_review_submit(item=item, expert=a, data=_data(expression_error=False, score_fits=True))
    with django_capture_on_commit_callbacks(execute=True):
        review_b = meta_review_submit(
            item=item, expert=b, data=_data(defects=[defect(ANALYSIS_TEXT, GAP, exists=False)])
        )
    case = AdjudicationCase.objects.get(item=item)
    assert case.disagreement == Decimal("1")
    assert not FinalLabel.objects.filter(item=item).exists()
    with django_capture_on_commit_callbacks(execute=True):
        meta_review_revise(
            review=review_b, user=b, data=_data(expression_error=False, score_fits=True)
        )
    revision = GradeRevision.objects.get(grade=review_b.grade)
    assert revision.old["score"] == "0" and revision.new["score"] == "1"
    assert revision.old["defects"][0]["quote"] == GAP and revision.new["defects"] == []
    assert FinalLabel.objects.get(item=item).value == Decimal("1")
    case.refresh_from_db()
    assert case.status == "resolved"


def test_an_expert_never_sees_another_review_before_the_item_is_final():
    item = analysis_item(required_judgements=2)
    a, b = _taken(item, "blind-a"), _taken(item, "blind-b")
    meta_review_submit(item=item, expert=a, data=_data(expression_error=True, score_fits=True))
    view = review_view_for_user(item_id=item.pk, user=b)
    assert view.review is None and view.others == []
    outsider = UserFactory(roles=["expert"])
    with pytest.raises(Exception, match="No such item"):
        review_view_for_user(item_id=item.pk, user=outsider)
    services.item_finalize(item_id=item.pk)
    view = review_view_for_user(item_id=item.pk, user=b)
    assert [g.expert_id for g in view.others] == [a.pk]


def test_analysis_items_are_created_once_and_double_scored_by_the_seeded_share():
    campaign = review_campaign(double_share=Decimal("0.5"))
    analyses = VerifierAnalysisFactory.create_batch(4)
    result = analysis_items_create(campaign=campaign, analyses=analyses)
    assert result.created_count == 4 and result.double_scored == 2
    again = analysis_items_create(campaign=campaign, analyses=analyses)
    assert again.created_ids == [] and again.already_present == 4
    assert set(Item.objects.values_list("analysis_id", flat=True)) == {a.pk for a in analyses}
    grading = review_campaign(task_kind="proof_grading")
    with pytest.raises(services.GradeError, match="analysis review campaign"):
        analysis_items_create(campaign=grading, analyses=analyses)


def test_an_analysis_review_campaign_rates_on_the_ternary_scale(admin_user):
    with pytest.raises(services.CampaignError, match="analysis review campaign rates"):
        services.campaign_create(
            name="Meta 0-7", created_by=admin_user, task_kind="analysis_review", scale="0-7"
        )
    campaign = services.campaign_create(
        name="Meta", created_by=admin_user, task_kind="analysis_review", scale="0-0.5-1"
    )
    assert campaign.task_kind == "analysis_review"
