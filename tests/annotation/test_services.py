"""Services of the annotation app: items, assignment, drafts, submission, revision, signals."""

from datetime import timedelta
from decimal import Decimal
from importlib import import_module

import pytest
from django.apps import apps as django_apps
from django.utils import timezone

from annotation import services
from annotation.models import Assignment, Campaign, CampaignMember, Grade, GradeRevision, Item
from annotation.services.grade_checks import (
    NOT_GRADED,
)
from annotation.services.review import analysis_items_create
from annotation.signals import item_judged, judgement_submitted
from problems.models import Problem
from tests.annotation.factories import (
    CampaignFactory,
    ItemFactory,
    approved_scheme,
    created_items,
    expert_in,
)
from tests.metaverify.factories import review_campaign
from tests.problems.page_factories import ProblemFactory, ProofFactory, VerifierAnalysisFactory

pytestmark = pytest.mark.django_db


def full_grade(**over) -> services.GradeInput:
    data = {"score": "5", "awards": {"c1": "2", "c2": "3"}, "comment": "fine"}
    data.update(over)
    return services.GradeInput.from_data(data)


def test_items_pinned_to_the_approved_scheme_or_none_said_so():
    campaign = CampaignFactory(double_share=Decimal("0.5"), sample_seed=7)
    with_scheme = ProblemFactory(external_id="P-WITH")
    scheme = approved_scheme(with_scheme)
    without = ProblemFactory(external_id="P-WITHOUT")
    proofs = [ProofFactory(problem=with_scheme) for _ in range(3)]
    proofs += [ProofFactory(problem=without)]
    result = services.items_create_from_selection(campaign=campaign, proofs=proofs)
    assert result.created_count == 4
    made = created_items(result)
    assert {i.scheme_id for i in made if i.proof.problem_id == with_scheme.pk} == {scheme.pk}
    assert [i.scheme_id for i in made if i.proof.problem_id == without.pk] == [None]
    assert "P-WITHOUT" in result.summary()
    assert result.double_scored == 2
    again = services.items_create_from_selection(campaign=campaign, proofs=proofs)
    assert again.created_ids == [] and again.already_present == 4


def test_double_scored_sample_is_reproducible_and_calibration_doubles_everything():
    keys = {n: ("P", "model", str(n)) for n in range(1, 101)}
    first = services.double_scored_keys(seed=3, share=Decimal("0.4"), keys=keys)
    assert len(first) == 40
    backwards = dict(reversed(keys.items()))
    assert first == services.double_scored_keys(seed=3, share=Decimal("0.4"), keys=backwards)
    assert first != services.double_scored_keys(seed=4, share=Decimal("0.4"), keys=keys)
    assert len(services.double_scored_keys(seed=3, share=Decimal(1), keys=keys)) == 100


def test_the_double_scored_sample_is_the_same_in_another_database():
    """The sample ranks proofs and analyses by their natural keys, which an import reproduces,
    not by database ids: the same corpus loaded again under other ids, with the same seed,
    doubles the same proofs and analyses (the demo's reviewed analyses once depended on it)."""

    def load():
        problem = ProblemFactory(external_id="P-SAMPLE")
        proofs = [ProofFactory(problem=problem, sample_key=str(n)) for n in range(20)]
        return proofs, [VerifierAnalysisFactory(proof=p, sample_key="0") for p in proofs]

    def doubled(proofs, analyses, seed=3):
        grading = CampaignFactory(double_share=Decimal("0.4"), sample_seed=seed)
        review = review_campaign(double_share=Decimal("0.4"), sample_seed=seed)
        items = created_items(services.items_create_from_selection(campaign=grading, proofs=proofs))
        items += created_items(analysis_items_create(campaign=review, analyses=analyses))
        return sorted(
            (i.campaign.task_kind, i.proof.sample_key) for i in items if i.required_judgements == 2
        )

    proofs, analyses = load()
    first = doubled(proofs, analyses)
    assert len(first) == 16
    assert doubled(proofs, analyses, seed=4) != first
    Campaign.objects.all().delete()
    Problem.objects.all().delete()
    ProofFactory.create_batch(7)  # the ids move on
    proofs, analyses = load()
    assert proofs[0].pk > 20
    assert doubled(proofs[::-1], analyses[::-1]) == first


def test_campaign_create_defaults_and_clear_errors(admin_user):
    campaign = services.campaign_create(name="Pilot round", created_by=admin_user)
    assert campaign.slug == "pilot-round"
    assert campaign.double_share == Decimal("0.40")
    assert "proof_by_example" in campaign.taxonomy_labels()
    assert len(campaign.error_taxonomy) == 11
    assert campaign.members.get().role == "admin"
    with pytest.raises(services.CampaignError, match="scale"):
        services.campaign_create(name="Bad", created_by=admin_user, scale="0-10.5")
    with pytest.raises(services.CampaignError, match="exists already"):
        services.campaign_create(name="Pilot round", created_by=admin_user)
    with pytest.raises(services.CampaignError, match="line 2"):
        services.taxonomy_from_text("a: A\nBad Key!: x\n")


def test_next_is_breadth_first_and_never_repeats_an_item():
    campaign = CampaignFactory()
    first = ItemFactory(campaign=campaign, required_judgements=2)
    second = ItemFactory(campaign=campaign, required_judgements=2)
    a, b, c = (expert_in(campaign) for _ in range(3))
    got_a = services.assignment_next(campaign=campaign, expert=a)
    assert got_a.item == first
    # b gets the item closest to complete (already half taken), not a fresh one
    got_b = services.assignment_next(campaign=campaign, expert=b)
    assert got_b.item == first
    # a resumes their own open item rather than getting a new one
    assert services.assignment_next(campaign=campaign, expert=a).pk == got_a.pk
    got_c = services.assignment_next(campaign=campaign, expert=c)
    assert got_c.item == second


def test_skip_releases_and_expired_leases_return_to_the_pool():
    campaign = CampaignFactory()
    item = ItemFactory(campaign=campaign)
    a, b = expert_in(campaign), expert_in(campaign)
    lease = services.assignment_next(campaign=campaign, expert=a)
    assert services.assignment_next(campaign=campaign, expert=b) is None
    Assignment.objects.filter(pk=lease.pk).update(leased_until=timezone.now() - timedelta(1))
    got = services.assignment_next(campaign=campaign, expert=b)
    assert got.item == item
    services.assignment_release(assignment=got)
    assert services.assignment_next(campaign=campaign, expert=b) is None


def test_heartbeat_extends_the_lease():
    campaign = CampaignFactory(lease_minutes=5)
    ItemFactory(campaign=campaign)
    lease = services.assignment_next(campaign=campaign, expert=expert_in(campaign))
    Assignment.objects.filter(pk=lease.pk).update(
        leased_until=timezone.now() + timedelta(seconds=5)
    )
    renewed = services.assignment_heartbeat(assignment=lease)
    assert renewed.leased_until > timezone.now() + timedelta(minutes=4)


def test_submit_is_idempotent_judged_in_the_transaction_submitted_on_commit(
    django_capture_on_commit_callbacks,
):
    campaign = CampaignFactory()
    item = ItemFactory(campaign=campaign)
    expert = expert_in(campaign)
    services.assignment_next(campaign=campaign, expert=expert)
    seen = []

    def on_submitted(**kw):
        seen.append(("submitted", kw["revised"]))

    def on_judged(**kw):
        seen.append(("judged", kw["item_id"]))

    judgement_submitted.connect(on_submitted, weak=False)
    item_judged.connect(on_judged, weak=False)
    try:
        with django_capture_on_commit_callbacks(execute=False) as callbacks:
            grade = services.grade_submit(
                item=item, expert=expert, data=full_grade(), submit_key="k"
            )
            again = services.grade_submit(item=item, expert=expert, data=full_grade())
            # a different judgement of the submitted grade is refused, with the grade as stored
            with pytest.raises(services.GradeConflict) as refused:
                services.grade_submit(
                    item=item, expert=expert, data=full_grade(score="1", score_note="hm")
                )
        assert refused.value.grade.score == Decimal(5)
        assert seen == [("judged", item.pk)]  # in the transaction, before it commits
        for callback in callbacks:
            callback()
    finally:
        judgement_submitted.disconnect(on_submitted)
        item_judged.disconnect(on_judged)
    assert again.pk == grade.pk and again.score == Decimal(5)
    assert Grade.objects.filter(item=item).count() == 1
    assert grade.computed_score == Decimal(5)
    assert seen == [("judged", item.pk), ("submitted", False)]
    assert Assignment.objects.get(item=item, expert=expert).status == "done"


def test_submit_refuses_wrong_awards_and_off_scale_scores():
    campaign = CampaignFactory()
    item = ItemFactory(campaign=campaign)
    expert = expert_in(campaign)
    services.assignment_next(campaign=campaign, expert=expert)
    with pytest.raises(services.GradeError) as err:
        services.grade_submit(
            item=item, expert=expert, data=full_grade(score="8", awards={"c1": "5", "zz": "1"})
        )
    text = str(err.value)
    assert "c1" in text and "zz is not a checkpoint" in text and "score" in text
    assert not Grade.objects.filter(item=item, status="submitted").exists()


def test_nothing_chosen_stores_no_score_and_cannot_be_submitted():
    """Spans, a comment and step verdicts do not grade: without an award, a deduction or a
    final score a draft stores no score and a submission is refused with the reason."""
    campaign = CampaignFactory(scale="0-0.5-1")
    item = ItemFactory(campaign=campaign, proof__text="Alpha beta gamma.")
    expert = expert_in(campaign)
    services.assignment_next(campaign=campaign, expert=expert)
    data = services.GradeInput.from_data(
        {
            "comment": "unsure",
            "step_verdicts": {"1": "wrong"},
            "spans": [{"start": 6, "end": 10, "quote": "beta", "category": "other"}],
        }
    )
    draft = services.grade_save_draft(item=item, expert=expert, data=data)
    assert (draft.score, draft.computed_score) == (None, None)
    with pytest.raises(services.GradeError) as err:
        services.grade_submit(item=item, expert=expert, data=data)
    assert err.value.problems == [NOT_GRADED]
    assert Grade.objects.get(item=item).status == "draft"


def test_old_drafts_of_an_untouched_checklist_forget_their_score():
    """The data migration for drafts the grading page saved on opening an item: only a draft
    with no award, no deduction and a final 0 (the empty checklist's) loses its scores."""
    migration = import_module("annotation.migrations.0005_drafts_without_choice_store_no_score")
    campaign = CampaignFactory()
    expert = expert_in(campaign)
    untouched, awarded, chosen, submitted = (
        Grade.objects.create(item=ItemFactory(campaign=campaign), expert=expert, **fields)
        for fields in (
            {"score": 0, "computed_score": 0},
            {"score": 0, "computed_score": 0, "awards": {"c1": "0"}},
            {"score": 5, "computed_score": 0},
            {"score": 0, "computed_score": 0, "status": "submitted"},
        )
    )
    migration.forget_unchosen_scores(django_apps, None)
    for grade in (untouched, awarded, chosen, submitted):
        grade.refresh_from_db()
    assert (untouched.score, untouched.computed_score) == (None, None)
    assert (awarded.score, awarded.computed_score) == (0, 0)
    assert (chosen.score, chosen.computed_score) == (5, 0)
    assert (submitted.score, submitted.computed_score) == (0, 0)


def test_submit_over_a_draft_updates_that_row_and_replaces_its_spans():
    campaign = CampaignFactory()
    item = ItemFactory(campaign=campaign, proof__text="Alpha beta gamma. Beta again.")
    expert = expert_in(campaign)
    services.assignment_next(campaign=campaign, expert=expert)
    span = {"start": 6, "end": 10, "quote": "beta", "category": "other"}
    draft = services.grade_save_draft(
        item=item,
        expert=expert,
        data=services.GradeInput.from_data({"spans": [span], "seconds_spent": 300}),
    )
    other = {"start": 18, "end": 22, "quote": "Beta", "category": "other"}
    grade = services.grade_submit(
        item=item, expert=expert, data=full_grade(spans=[other], seconds_spent=120)
    )
    stored = Grade.objects.get(item=item, expert=expert)
    assert grade.pk == stored.pk == draft.pk
    assert stored.created_at == draft.created_at and stored.updated_at > draft.updated_at
    assert (stored.status, stored.score, stored.seconds_spent) == ("submitted", Decimal(5), 300)
    assert list(stored.spans.values_list("quote", "start")) == [("Beta", 18)]
    assert grade.created_at == draft.created_at  # deferred on the returned grade, read on use


def test_draft_keeps_spans_and_reanchors_a_drifted_quote():
    campaign = CampaignFactory()
    item = ItemFactory(campaign=campaign, proof__text="Alpha beta gamma. Beta again.")
    expert = expert_in(campaign)
    services.assignment_next(campaign=campaign, expert=expert)
    data = services.GradeInput.from_data(
        {
            "spans": [
                {"start": 3, "end": 7, "quote": "beta", "category": "other", "note": "n"},
            ],
            "score": "5",
        }
    )
    grade = services.grade_save_draft(item=item, expert=expert, data=data)
    span = grade.spans.get()
    assert (span.start, span.end, span.quote) == (6, 10, "beta")
    assert grade.score == 5 and grade.status == "draft"
    off_scale = services.GradeInput.from_data({"score": "9"})
    with pytest.raises(services.GradeError, match="score:"):
        services.grade_save_draft(item=item, expert=expert, data=off_scale)
    grade.refresh_from_db()
    assert grade.score == 5
    bad = services.GradeInput.from_data(
        {"spans": [{"start": 0, "end": 3, "quote": "zeta", "category": "other"}]}
    )
    with pytest.raises(services.GradeError, match="does not occur"):
        services.grade_save_draft(item=item, expert=expert, data=bad)


def test_submit_after_expired_lease_never_overfills_the_item():
    campaign = CampaignFactory()
    item = ItemFactory(campaign=campaign, required_judgements=1)
    late, other = expert_in(campaign), expert_in(campaign)
    lease = services.assignment_next(campaign=campaign, expert=late)
    Assignment.objects.filter(pk=lease.pk).update(leased_until=timezone.now() - timedelta(1))
    services.assignment_next(campaign=campaign, expert=other)
    with pytest.raises(services.GradeError, match="expired"):
        services.grade_submit(item=item, expert=late, data=full_grade())
    services.grade_submit(item=item, expert=other, data=full_grade())
    assert Grade.objects.filter(item=item, status="submitted").count() == 1


def test_submit_after_expired_lease_is_accepted_while_the_slot_is_free():
    campaign = CampaignFactory()
    item = ItemFactory(campaign=campaign)
    expert = expert_in(campaign)
    lease = services.assignment_next(campaign=campaign, expert=expert)
    Assignment.objects.filter(pk=lease.pk).update(leased_until=timezone.now() - timedelta(1))
    grade = services.grade_submit(item=item, expert=expert, data=full_grade())
    assert grade.is_submitted


def test_revisions_keep_history_until_final(django_capture_on_commit_callbacks):
    campaign = CampaignFactory()
    item = ItemFactory(campaign=campaign)
    expert = expert_in(campaign)
    services.assignment_next(campaign=campaign, expert=expert)
    grade = services.grade_submit(item=item, expert=expert, data=full_grade())
    services.grade_revise(grade=grade, user=expert, data=full_grade(score="4", score_note="slip"))
    services.grade_revise(grade=grade, user=expert, data=full_grade(score="4", score_note="slip"))
    revision = GradeRevision.objects.get(grade=grade)
    assert revision.old["score"] == "5" and revision.new["score"] == "4"
    assert revision.changed_by == expert
    services.item_finalize(item_id=item.pk)
    with pytest.raises(services.GradeError, match="final"):
        services.grade_revise(grade=grade, user=expert, data=full_grade(score="3"))
    assert Item.objects.get(pk=item.pk).is_final


def test_closed_campaign_gives_no_work_and_takes_no_revision():
    campaign = CampaignFactory()
    item = ItemFactory(campaign=campaign)
    expert = expert_in(campaign)
    services.assignment_next(campaign=campaign, expert=expert)
    grade = services.grade_submit(item=item, expert=expert, data=full_grade())
    services.campaign_close(campaign=campaign)
    campaign = Campaign.objects.get(pk=campaign.pk)
    ItemFactory(campaign=campaign)
    assert services.assignment_next(campaign=campaign, expert=expert) is None
    with pytest.raises(services.GradeError, match="closed"):
        services.grade_revise(grade=grade, user=expert, data=full_grade(score="3"))


def test_manual_assignment_and_move(admin_user):
    campaign = CampaignFactory()
    item = ItemFactory(campaign=campaign)
    a, b = expert_in(campaign), expert_in(campaign)
    assigned = services.assignment_create_manual(item=item, expert=a, assigned_by=admin_user)
    assert services.assignment_next(campaign=campaign, expert=a).pk == assigned.pk
    with pytest.raises(services.AssignmentError, match="already has"):
        services.assignment_create_manual(item=item, expert=b, assigned_by=admin_user)
    moved = services.assignment_move(assignment=assigned, to_expert=b, moved_by=admin_user)
    assert moved.expert == b and moved.assigned_by == admin_user
    assert Assignment.objects.get(pk=assigned.pk).status == "released"
    assert services.assignment_next(campaign=campaign, expert=a) is None


def test_gold_items_are_mixed_in_and_do_not_count_as_normal_work():
    campaign = CampaignFactory(gold_rate=Decimal("1"))
    gold = ItemFactory(campaign=campaign, is_gold=True)
    normal = ItemFactory(campaign=campaign)
    a, b = expert_in(campaign), expert_in(campaign)
    got = services.assignment_next(campaign=campaign, expert=a)
    assert got.item == gold
    services.grade_submit(item=gold, expert=a, data=full_grade())
    assert services.assignment_next(campaign=campaign, expert=a).item == normal
    # every expert may do the gold item, whatever its required judgements
    assert services.assignment_next(campaign=campaign, expert=b).item == gold


def test_item_set_gold_takes_it_out_of_normal_work():
    campaign = CampaignFactory()
    item = ItemFactory(campaign=campaign)
    services.item_set_gold(item=item)
    assert services.assignment_next(campaign=campaign, expert=expert_in(campaign)) is None
    services.item_set_gold(item=item, is_gold=False)
    assert services.assignment_next(campaign=campaign, expert=expert_in(campaign)).item == item


def test_final_gold_items_are_still_served_and_stay_blind():
    from annotation.selectors import grading_view_for_user

    campaign = CampaignFactory(gold_rate=Decimal("1"))
    gold = ItemFactory(campaign=campaign, is_gold=True)
    services.item_finalize(item_id=gold.pk)
    a, b = expert_in(campaign), expert_in(campaign)
    assert services.assignment_next(campaign=campaign, expert=a).item == gold
    services.grade_submit(item=gold, expert=a, data=full_grade())
    assert services.assignment_next(campaign=campaign, expert=b).item == gold
    assert grading_view_for_user(item_id=gold.pk, user=b).others == []


def test_an_expert_handed_many_items_resumes_the_oldest_from_a_page():
    """An admin handed an expert 30 items; the first 10 leases lapsed while other experts took
    those items' slots. "Next" releases the lapsed ones and resumes the eleventh, reading the
    leases a page at a time (never all 30 as rows), and the expert's 30 leases in this campaign
    cost nothing in another one."""
    from django.db.models.signals import post_init

    campaign = CampaignFactory()
    items = [ItemFactory(campaign=campaign, required_judgements=1) for _ in range(30)]
    expert, admin = expert_in(campaign), expert_in(campaign)
    handed = [
        services.assignment_create_manual(item=item, expert=expert, assigned_by=admin)
        for item in items
    ]
    lapsed = timezone.now() - timedelta(hours=1)
    Assignment.objects.filter(pk__in=[a.pk for a in handed[:10]]).update(leased_until=lapsed)
    for item in items[:10]:  # another expert takes each lapsed item's only slot
        Assignment.objects.create(
            item=item, expert=admin, leased_until=timezone.now() + timedelta(hours=1)
        )
    other = CampaignFactory()
    ItemFactory(campaign=other)
    CampaignMember.objects.create(campaign=other, user=expert, role="expert")

    built = []

    def count(sender, instance, **kwargs):
        built.append(instance.pk)

    post_init.connect(count, sender=Assignment)
    try:
        resumed = services.assignment_next(campaign=campaign, expert=expert)
        assert resumed.pk == handed[10].pk
        # two pages of 8 and the ten lapsed leases read again under lock; all 30 before
        assert len(built) == 2 * 8 + 10
        built.clear()
        elsewhere = services.assignment_next(campaign=other, expert=expert)
        assert elsewhere.item.campaign_id == other.pk and elsewhere.expert_id == expert.pk
    finally:
        post_init.disconnect(count, sender=Assignment)
    released = Assignment.objects.filter(pk__in=[a.pk for a in handed[:10]])
    assert set(released.values_list("status", flat=True)) == {"released"}
