"""The expert's and the admin's daily flow on the annotation pages: item k of N, previous and
next, a submitted grade read-only until revised, the final label fed back after adjudication,
skipped drafts, chain names, hand assignment by problem and proof."""

import json
from datetime import timedelta
from decimal import Decimal

import pytest
from django.urls import reverse
from django.utils import timezone

from adjudication.services import case_resolve
from annotation import services
from annotation.models import Assignment
from annotation.selectors import assignment as assignment_selectors
from tests.annotation.factories import CampaignFactory, ItemFactory, approved_scheme, expert_in
from tests.factories import UserFactory
from tests.problems.page_factories import ProblemFactory, ProofFactory

pytestmark = pytest.mark.django_db


def submit(client, item, score="5"):
    """Submits as the grading page does: the API's operation, with the session."""
    url = reverse("api-item-submit", args=[item.pk])
    data = {"score": score, "awards": {"c1": "2", "c2": "3"}, "score_note": "judged so"}
    response = client.post(url, json.dumps(data), content_type="application/json")
    assert response.status_code == 200, response.json()
    return response.json()


def test_item_k_of_n_previous_and_next_that_moves_on(client):
    campaign = CampaignFactory()
    items = [ItemFactory(campaign=campaign) for _ in range(4)]
    expert = expert_in(campaign)
    client.force_login(expert)
    next_url = reverse("annotation:next", args=[campaign.slug])

    first = client.post(next_url).url
    assert first == reverse("annotation:item", args=[items[0].pk])
    html = client.get(first).content.decode()
    assert "item 1 of 4 for you, 3 remaining" in html and 'id="previous-link"' not in html
    assert f'action="{next_url}?after={items[0].pk}"' in html
    # "Next" leaves this item (still the expert's) and never reloads it
    second = client.post(f"{next_url}?after={items[0].pk}").url
    assert second == reverse("annotation:item", args=[items[1].pk])
    # and Next again walks on to new work: the held one comes back once the rest is done
    third = client.post(f"{next_url}?after={items[1].pk}").url
    assert third == reverse("annotation:item", args=[items[2].pk])
    submit(client, items[0])
    html = client.get(second).content.decode()
    assert "item 2 of 4 for you, 2 remaining" in html
    assert f'href="{first}" id="previous-link"' in html
    # the first item, submitted: read-only, with a revise link
    html = client.get(first).content.decode()
    assert "item 1 of 4 for you, 3 remaining" in html
    assert 'id="revise-link"' in html and 'data-editable="0"' in html
    assert 'id="submit-button"' not in html
    html = client.get(first, {"revise": "1"}).content.decode()
    assert 'data-editable="1"' in html and "Save revision" in html


def test_next_walks_the_campaign_and_passed_work_comes_back_last():
    """Next moves on through the campaign: the work an expert holds and has not moved on from
    first, then new items, and only then what they moved on from, the one passed longest ago
    first; Skip walks the same way (and the skipped item goes to the others)."""
    campaign = CampaignFactory()
    items = [ItemFactory(campaign=campaign) for _ in range(5)]
    expert, other = expert_in(campaign), expert_in(campaign)

    def walk(after=None):
        return services.assignment_next(
            campaign=campaign, expert=expert, after_item_id=after
        ).item_id

    ids = [item.pk for item in items]
    seen = [walk()]
    for _ in range(3):
        seen.append(walk(seen[-1]))
    assert seen == ids[:4]  # four different items, never back and forth
    # an admin hands the expert the last item: held work not yet passed comes before the rest
    services.assignment_create_manual(item=items[4], expert=expert, assigned_by=None)
    assert walk(ids[3]) == ids[4]
    # nothing new is left: the passed items come back, the one passed longest ago first
    assert [walk(ids[4]), walk(ids[0]), walk(ids[1])] == [ids[0], ids[1], ids[2]]
    # "Grade next" from the campaign page resumes the item the expert was on
    assert walk() == ids[2]
    # Skip releases the item to the others and walks on the same way
    services.assignment_release(assignment=Assignment.objects.get(item=items[2], expert=expert))
    assert walk(ids[2]) == ids[3]
    assert services.assignment_next(campaign=campaign, expert=other).item_id == ids[2]
    assert Assignment.objects.filter(expert=expert, status="active").count() == 4


def test_next_from_the_last_item_held_offers_the_way_back(client):
    campaign = CampaignFactory()
    item = ItemFactory(campaign=campaign)
    expert = expert_in(campaign)
    client.force_login(expert)
    services.assignment_next(campaign=campaign, expert=expert)
    page = client.post(reverse("annotation:next", args=[campaign.slug]) + f"?after={item.pk}")
    assert page.status_code == 200
    html = page.content.decode()
    assert "No work left" in html
    assert f'href="/annotation/items/{item.pk}/" id="held-item"' in html


def test_the_expert_sees_the_final_label_and_the_adjudicators_rationale(client):
    campaign = CampaignFactory()
    item = ItemFactory(campaign=campaign, required_judgements=2)
    anna, ben = expert_in(campaign, "anna"), expert_in(campaign, "ben")
    for expert, score in ((anna, "7"), (ben, "2")):
        services.assignment_create_manual(item=item, expert=expert, assigned_by=None)
        client.force_login(expert)
        submit(client, item, score)
    html = client.get(reverse("annotation:item", args=[item.pk])).content.decode()
    assert 'id="final-label"' not in html
    case = item.adjudication_cases.get()
    adjudicator = UserFactory(roles=["adjudicator"])
    case_resolve(
        case=case,
        user=adjudicator,
        action="new_score",
        score="4",
        rationale="The bound in step 2 is asserted, not proved: **4**.",
    )
    html = client.get(reverse("annotation:item", args=[item.pk])).content.decode()
    feedback = html[html.index('id="final-label"') :]
    assert "Final label: 4" in feedback and f"by {adjudicator.username}" in feedback
    assert "<strong>4</strong>" in feedback  # the rationale rendered, not raw Markdown


def test_a_skipped_draft_is_not_offered_to_continue(client):
    campaign = CampaignFactory()
    item = ItemFactory(campaign=campaign)
    expert = expert_in(campaign)
    services.assignment_next(campaign=campaign, expert=expert)
    services.grade_save_draft(item=item, expert=expert, data=services.GradeInput(score=Decimal(3)))
    client.force_login(expert)
    url = reverse("annotation:campaign", args=[campaign.slug])
    assert ">continue<" in client.get(url).content.decode()
    client.post(reverse("annotation:item-skip", args=[item.pk]))
    other = expert_in(campaign)
    assert services.assignment_next(campaign=campaign, expert=other).item_id == item.pk
    html = client.get(url).content.decode()
    assert ">continue<" not in html and "skipped" in html


def test_chain_headings_keep_their_letter_and_name(client):
    text = """## Checkpoints (7 pts total)

**Chain A: pigeonhole, then Rolle**
- [7 pts] Everything. [additive]

**Chain B: Newton's inequalities**
- [7 pts] Everything. [additive]
"""
    proof = ProofFactory()
    item = ItemFactory(proof=proof, scheme=approved_scheme(proof.problem, text))
    expert = expert_in(item.campaign)
    services.assignment_next(campaign=item.campaign, expert=expert)
    client.force_login(expert)
    html = client.get(reverse("annotation:item", args=[item.pk])).content.decode()
    assert "Chain A: pigeonhole, then Rolle" in html
    assert "Chain B: Newton" in html


def test_assign_by_hand_picks_items_by_problem_and_proof(client, admin_user):
    campaign = CampaignFactory()
    problem = ProblemFactory(external_id="HAND-1")
    item = ItemFactory(campaign=campaign, proof=ProofFactory(problem=problem, generator="gpt-x"))
    done = ItemFactory(campaign=campaign, is_final=True)
    expert_in(campaign, "anna")
    client.force_login(admin_user)
    html = client.get(reverse("annotation:campaign", args=[campaign.slug])).content.decode()
    assert '<optgroup label="HAND-1">' in html
    assert f'<option value="{item.pk}">HAND-1 · gpt-x' in html
    assert f'<option value="{done.pk}">' not in html
    client.post(
        reverse("annotation:assign", args=[campaign.slug]), {"item": item.pk, "username": "anna"}
    )
    assert Assignment.objects.get(item=item).expert.username == "anna"


def test_position_counts_what_next_could_still_offer():
    """Another expert's live lease fills a single-judgement item, an expired one does not; an
    item held back by the routing budget and one the expert held before are not offered."""
    from datetime import timedelta

    from django.utils import timezone

    campaign = CampaignFactory()
    items = [ItemFactory(campaign=campaign) for _ in range(6)]
    expert, other = expert_in(campaign), expert_in(campaign)
    now = timezone.now()
    Assignment.objects.create(item=items[1], expert=other, leased_until=now + timedelta(hours=1))
    Assignment.objects.create(item=items[2], expert=other, leased_until=now - timedelta(minutes=1))
    Assignment.objects.create(
        item=items[3], expert=expert, leased_until=now - timedelta(minutes=1), status="released"
    )
    items[4].route_held = True
    items[4].save(update_fields=["route_held"])
    Assignment.objects.create(item=items[0], expert=expert, leased_until=now + timedelta(hours=1))

    position = assignment_selectors.expert_position(item=items[0], expert=expert)
    # items[0] held by the expert, items[2] (expired lease) and items[5] offerable
    assert (position.number, position.total, position.remaining) == (1, 3, 2)
    first = services.assignment_next(campaign=campaign, expert=other)
    assert first.item_id == items[1].pk  # the other expert's own lease comes back first


def test_expert_position_reads_a_fixed_number_of_queries(django_assert_num_queries):
    campaign = CampaignFactory()
    items = [ItemFactory(campaign=campaign) for _ in range(5)]
    expert = expert_in(campaign)
    services.assignment_next(campaign=campaign, expert=expert)
    with django_assert_num_queries(1):
        position = assignment_selectors.expert_position(item=items[0], expert=expert)
    assert (position.number, position.total, position.remaining) == (1, 5, 4)


def test_past_the_bound_the_position_says_over(monkeypatch, client):
    """Past OFFERABLE_BOUND items that next could offer, the count stops: the page says "over"
    a number the true count exceeds; at the bound it is exact."""
    monkeypatch.setattr(assignment_selectors, "OFFERABLE_BOUND", 3)
    campaign = CampaignFactory()
    items = [ItemFactory(campaign=campaign) for _ in range(5)]
    expert = expert_in(campaign)
    services.assignment_next(campaign=campaign, expert=expert)
    client.force_login(expert)
    html = client.get(reverse("annotation:item", args=[items[0].pk])).content.decode()
    assert "item 1 of over 4 for you, over 3 remaining" in html  # truly 5 and 4
    Assignment.objects.create(  # skipped: never offered to this expert again
        item=items[4], expert=expert, leased_until=items[0].created_at, status="released"
    )
    position = assignment_selectors.expert_position(item=items[0], expert=expert)
    assert (position.total, position.remaining, position.more) == (4, 3, False)


def test_past_the_bound_of_held_items_the_position_says_over(monkeypatch):
    """An expert a manager handed more items than OFFERABLE_BOUND holds them all, and the count
    of the others they hold stops at the bound too: "over", as for the offerable ones."""
    monkeypatch.setattr(assignment_selectors, "OFFERABLE_BOUND", 3)
    campaign = CampaignFactory()
    items = [ItemFactory(campaign=campaign) for _ in range(5)]
    expert = expert_in(campaign)
    Assignment.objects.bulk_create(
        Assignment(item=item, expert=expert, leased_until=timezone.now() + timedelta(hours=1))
        for item in items
    )
    position = assignment_selectors.expert_position(item=items[0], expert=expert)
    assert (position.number, position.total, position.remaining, position.more) == (1, 4, 3, True)
    Assignment.objects.filter(item=items[4]).update(status="released")  # 3 others: exact
    position = assignment_selectors.expert_position(item=items[0], expert=expert)
    assert (position.total, position.remaining, position.more) == (4, 3, False)


def test_the_submission_count_stays_equal_to_the_grades(client):
    """ExpertProgress counts the expert's submitted grades per campaign and each grade keeps its
    place, through submissions, revisions and another campaign's work: equal to the real
    count, and "previous" follows the order of submission."""
    from annotation.models import ExpertProgress, Grade

    campaign, other_campaign = CampaignFactory(), CampaignFactory()
    items = [ItemFactory(campaign=campaign) for _ in range(3)]
    ItemFactory(campaign=other_campaign)
    expert = expert_in(campaign)
    other_campaign.members.create(user=expert, role="expert")
    client.force_login(expert)
    order = []
    for campaign_now in (campaign, other_campaign, campaign, campaign):
        item = services.assignment_next(campaign=campaign_now, expert=expert).item
        submit(client, item)
        order.append(item)
    grade = Grade.objects.get(item=order[0], expert=expert)
    services.grade_revise(grade=grade, user=expert, data=services.GradeInput(score=Decimal(2)))
    for each in (campaign, other_campaign):
        grades = Grade.objects.filter(item__campaign=each, expert=expert, status="submitted")
        progress = ExpertProgress.objects.get(campaign=each, expert=expert)
        assert progress.submitted == grades.count()
        assert sorted(grades.values_list("sequence", flat=True)) == list(
            range(1, grades.count() + 1)
        )
    mine = [i for i in order if i.campaign_id == campaign.pk]
    assert mine == items  # in the queue's order
    html = client.get(reverse("annotation:item", args=[mine[2].pk])).content.decode()
    assert "item 3 of 3 for you, 0 remaining" in html
    assert f'href="/annotation/items/{mine[1].pk}/" id="previous-link"' in html
