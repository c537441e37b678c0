"""Pairwise campaigns' services over PostgreSQL: pairs from a problem's proofs, leases with a
recorded random order, choices stored against the proof keys, double judgement, the case a
disagreement opens and its settlement, blindness of the pairs' proofs."""

import pytest

from annotation.models import JudgementStatus, PairItem, PairJudgement, PairStatus
from annotation.selectors.grading import proofs_held_blind
from annotation.selectors.pairs import pair_ratings, pair_view_for_user
from annotation.services.pairs import (
    PairError,
    normalised_choice,
    pair_judgement_release,
    pair_judgement_submit,
    pair_next,
    pair_settle,
    pairs_create,
)
from tests.annotation.pair_factories import pairwise_campaign
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_pairs_are_made_per_problem_in_canonical_order_and_idempotently():
    campaign, proofs, _ = pairwise_campaign(problems=2)
    assert PairItem.objects.filter(campaign=campaign).count() == 6  # 3 pairs per problem
    for pair in PairItem.objects.filter(campaign=campaign):
        assert pair.proof_a_id < pair.proof_b_id
        assert pair.proof_a.problem_id == pair.proof_b.problem_id
    again = pairs_create(campaign=campaign, proof_ids=[p.pk for p in proofs.values()])
    assert again == 0
    campaign2, proofs2, _ = pairwise_campaign(generators=("g1", "g2", "g3", "g4", "g5"))
    PairItem.objects.filter(campaign=campaign2).delete()
    made = pairs_create(
        campaign=campaign2, proof_ids=[p.pk for p in proofs2.values()], max_per_problem=4, seed=3
    )
    assert made == 4
    with pytest.raises(PairError, match="no proof with id 999999999"):
        pairs_create(campaign=campaign2, proof_ids=[999999999])


def test_choice_is_normalised_to_the_proof_keys():
    assert normalised_choice(shown="left", a_on_left=True) == "a"
    assert normalised_choice(shown="left", a_on_left=False) == "b"
    assert normalised_choice(shown="right", a_on_left=False) == "a"
    assert normalised_choice(shown="tie", a_on_left=False) == "tie"
    with pytest.raises(PairError, match="choice"):
        normalised_choice(shown="up", a_on_left=True)


def test_two_experts_agree_then_pair_is_final_and_order_recorded():
    campaign, _, (one, two) = pairwise_campaign(generators=("model-a", "model-b"))
    first = pair_next(campaign=campaign, expert=one)
    second = pair_next(campaign=campaign, expert=two)
    assert first.pair_id == second.pair_id and first.status == JudgementStatus.ACTIVE
    assert pair_next(campaign=campaign, expert=one).pk == first.pk  # own lease again
    # both prefer proof_a, whatever side each saw it on
    for judgement in (first, second):
        shown = "left" if judgement.a_on_left else "right"
        pair_judgement_submit(judgement_id=judgement.pk, expert=judgement.expert, shown=shown)
    pair = PairItem.objects.get(pk=first.pair_id)
    assert pair.status == PairStatus.FINAL and pair.final_choice == "a"
    assert pair.final_source == "agreement" and pair.submitted_count == 2
    assert pair_next(campaign=campaign, expert=one) is None


def test_double_submit_changes_nothing_and_final_pairs_refuse_changes():
    campaign, _, (one, two) = pairwise_campaign(generators=("model-a", "model-b"))
    j1 = pair_next(campaign=campaign, expert=one)
    j2 = pair_next(campaign=campaign, expert=two)
    pair_judgement_submit(judgement_id=j1.pk, expert=one, shown="tie", reason=" close ")
    again = pair_judgement_submit(judgement_id=j1.pk, expert=one, shown="tie", reason="close")
    assert again.reason == "close"
    assert PairItem.objects.get(pk=j1.pair_id).submitted_count == 1
    pair_judgement_submit(judgement_id=j2.pk, expert=two, shown="tie")
    assert PairItem.objects.get(pk=j1.pair_id).final_choice == "tie"
    with pytest.raises(PairError, match="final"):
        pair_judgement_submit(judgement_id=j1.pk, expert=one, shown="left")
    with pytest.raises(PairError, match="No such judgement"):
        pair_judgement_submit(judgement_id=j1.pk, expert=two, shown="left")


def test_disagreement_opens_a_case_an_adjudicator_settles():
    campaign, _, (one, two) = pairwise_campaign(generators=("model-a", "model-b"))
    j1 = pair_next(campaign=campaign, expert=one)
    j2 = pair_next(campaign=campaign, expert=two)
    pair_judgement_submit(judgement_id=j1.pk, expert=one, shown="left")
    pair_judgement_submit(judgement_id=j2.pk, expert=two, shown="tie")
    pair = PairItem.objects.get(pk=j1.pair_id)
    assert pair.status == PairStatus.DISPUTED and pair.final_choice == ""
    # while disputed, an expert may still revise to agree
    judge = UserFactory(roles=["adjudicator"])
    with pytest.raises(PairError, match="reason"):
        pair_settle(pair_id=pair.pk, adjudicator=judge, choice="b", reason=" ")
    with pytest.raises(PairError, match="Only adjudicators"):
        pair_settle(pair_id=pair.pk, adjudicator=one, choice="b", reason="x")
    settled = pair_settle(pair_id=pair.pk, adjudicator=judge, choice="b", reason="B is complete")
    assert settled.status == PairStatus.FINAL and settled.final_source == "adjudication"
    assert pair_settle(pair_id=pair.pk, adjudicator=judge, choice="b", reason="again").pk
    with pytest.raises(PairError, match="disputed"):
        pair_settle(pair_id=pair.pk, adjudicator=judge, choice="a", reason="changed my mind")


def test_released_lease_frees_the_slot_and_the_order_is_drawn_both_ways():
    campaign, _, experts = pairwise_campaign(generators=("model-a", "model-b"), experts=3)
    j1 = pair_next(campaign=campaign, expert=experts[0])
    pair_next(campaign=campaign, expert=experts[1])
    assert pair_next(campaign=campaign, expert=experts[2]) is None  # both slots leased
    pair_judgement_release(judgement=j1)
    assert pair_next(campaign=campaign, expert=experts[2]).pair_id == j1.pair_id
    # the order is drawn per lease: over many pairs both orders occur
    campaign2, _, (one, _two) = pairwise_campaign(generators=[f"g{k}" for k in range(8)])
    seen = set()
    while (judgement := pair_next(campaign=campaign2, expert=one)) is not None:
        seen.add(judgement.a_on_left)
        pair_judgement_submit(judgement_id=judgement.pk, expert=one, shown="tie")
    assert seen == {True, False}
    assert PairJudgement.objects.filter(expert=one).count() == 28


def test_pair_proofs_are_held_blind_until_judged_and_the_view_names_no_model():
    campaign, proofs, (one, _two) = pairwise_campaign(generators=("model-a", "model-b"))
    a, b = proofs[0, "model-a"], proofs[0, "model-b"]
    held = set(proofs_held_blind(one).values_list("proof_id", flat=True))
    assert {a.pk, b.pk} <= held
    judgement = pair_next(campaign=campaign, expert=one)
    view = pair_view_for_user(pair_id=judgement.pair_id, user=one)
    assert {view.left_text, view.right_text} == {a.text, b.text}
    assert (view.left_text == a.text) == judgement.a_on_left
    pair_judgement_submit(judgement_id=judgement.pk, expert=one, shown="left")
    held = set(proofs_held_blind(one).values_list("proof_id", flat=True))
    assert not {a.pk, b.pk} & held


def test_bradley_terry_ratings_of_proofs_and_generators():
    campaign, proofs, (one, two) = pairwise_campaign(problems=2)
    # model-a beats everyone, model-c loses to everyone, on both problems
    rank = {"model-a": 0, "model-b": 1, "model-c": 2}
    gen = {p.pk: g for (_, g), p in proofs.items()}
    for expert in (one, two):
        while (j := pair_next(campaign=campaign, expert=expert)) is not None:
            pair = j.pair
            better_a = rank[gen[pair.proof_a_id]] < rank[gen[pair.proof_b_id]]
            shown = "left" if better_a == j.a_on_left else "right"
            pair_judgement_submit(judgement_id=j.pk, expert=expert, shown=shown)
    ratings = pair_ratings(campaign)
    assert ratings.outcomes == 6
    assert [s.key for s in ratings.generators] == ["model-a", "model-b", "model-c"]
    top = ratings.generators[0]
    assert top.low < top.score < top.high and top.wins == 4 and top.comparisons == 4
    assert gen[ratings.proofs[0].key] == "model-a"


def test_a_lapsed_lease_whose_slots_were_taken_goes_back_and_cannot_be_submitted():
    from datetime import timedelta

    from django.utils import timezone

    campaign, _, experts = pairwise_campaign(generators=("model-a", "model-b"), experts=3)
    lapsed = pair_next(campaign=campaign, expert=experts[0])
    PairJudgement.objects.filter(pk=lapsed.pk).update(
        leased_until=timezone.now() - timedelta(minutes=1)
    )
    taken = [pair_next(campaign=campaign, expert=e) for e in experts[1:]]
    assert all(j is not None and j.pair_id == lapsed.pair_id for j in taken)
    with pytest.raises(PairError, match="ran out"):
        pair_judgement_submit(judgement_id=lapsed.pk, expert=experts[0], shown="left")
    assert pair_next(campaign=campaign, expert=experts[0]) is None
    assert PairJudgement.objects.get(pk=lapsed.pk).status == JudgementStatus.RELEASED
    # a lapsed lease with its slot still free is renewed and may be submitted
    campaign2, _, (one, _two) = pairwise_campaign(generators=("model-a", "model-b"))
    mine = pair_next(campaign=campaign2, expert=one)
    PairJudgement.objects.filter(pk=mine.pk).update(
        leased_until=timezone.now() - timedelta(minutes=1)
    )
    pair_judgement_submit(judgement_id=mine.pk, expert=one, shown="tie")
    assert PairItem.objects.get(pk=mine.pair_id).submitted_count == 1
