"""Step verdicts in MathOlympiadEval's words (CORRECT / WRONG) are ours once stored, and a first
wrong step that disagrees with them is refused with a 400 naming the field."""

import pytest

from annotation.models import Grade
from annotation.steps import steps_check
from tests.annotation.factories import CampaignFactory, ItemFactory, expert_in

pytestmark = pytest.mark.django_db


def test_the_seeds_verdicts_are_stored_as_ours_with_the_first_wrong_step(api_client_for):
    campaign = CampaignFactory()
    item = ItemFactory(campaign=campaign)
    api = api_client_for(expert_in(campaign))
    api.post(f"/api/v1/campaigns/{campaign.slug}/next/")
    body = {"score": 3, "step_verdicts": {"1": "CORRECT", "2": "WRONG", "3": "unclear"}}
    response = api.post(f"/api/v1/items/{item.pk}/submit/", body, format="json")
    assert response.status_code == 200, response.json()
    grade = Grade.objects.get(item=item)
    assert grade.step_verdicts == {"1": "correct", "2": "wrong", "3": "unclear"}
    assert grade.first_wrong_step == 2


def test_a_first_wrong_step_after_a_step_marked_wrong_is_refused(api_client_for):
    campaign = CampaignFactory()
    item = ItemFactory(campaign=campaign)
    api = api_client_for(expert_in(campaign))
    api.post(f"/api/v1/campaigns/{campaign.slug}/next/")
    body = {"score": 3, "step_verdicts": {"1": "WRONG", "4": "WRONG"}, "first_wrong_step": 4}
    response = api.post(f"/api/v1/items/{item.pk}/submit/", body, format="json")
    assert response.status_code == 400
    assert response.json()["problems"] == [
        "first_wrong_step: step 1 is marked wrong, before step 4"
    ]
    lower = {"score": 3, "step_verdicts": {"1": "Correct"}}
    refused = api.post(f"/api/v1/items/{item.pk}/submit/", lower, format="json")
    assert refused.status_code == 400
    assert refused.json()["problems"][0].startswith("step_verdicts: step 1: 'Correct'")
    assert not Grade.objects.filter(item=item, status="submitted").exists()


def test_the_first_wrong_step_must_be_the_first_step_marked_wrong():
    _, _, problems = steps_check({"2": "CORRECT"}, 2)
    assert problems == ["first_wrong_step: step 2 is marked correct, not wrong"]
    _, _, earlier = steps_check({"4": "WRONG"}, 2)  # earlier than the only step marked wrong
    assert earlier == ["first_wrong_step: step 2 is not marked wrong (the first step marked "
                       "wrong is 4)"]  # fmt: skip
    assert steps_check({"1": "correct", "3": "wrong", "5": "wrong"}, 3)[2] == []
    assert steps_check({"1": "correct"}, 3)[2] == []  # step 3 left unmarked
    assert steps_check({"x": "wrong"}, None)[2] == [
        "step_verdicts: 'x' is not a step number (1, 2, ...)"
    ]
