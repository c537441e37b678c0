"""Deliveries sent by the real Celery worker (on Redis, the `webhooks` queue) to a real receiver
on 127.0.0.1: a label change makes one signed delivery that verifies as the manual says; a 500
then a 200 is delivered on the second try; a receiver that is down ends failed with its error,
while the judgement that made the event is answered at once; a replay sends the message again.

The session's worker retries after 0.3 s, doubling, with a 2 s timeout (tests/conftest.py
`celery_process`), where a deployment waits 10 s."""

import json
import time
from decimal import Decimal

import pytest

from adjudication.models import AdjudicationCase
from adjudication.services.labels import final_label_set
from annotation.models import Grade
from tests.annotation.factories import CampaignFactory, ItemFactory, expert_in
from tests.conftest import wait_for
from tests.factories import UserFactory
from tests.webhooks.helpers import documented_verify
from tests.webhooks.receiver import Receiver, down_url
from webhooks.models import Delivery
from webhooks.services import webhook_create

pytestmark = [pytest.mark.worker]


def finished(delivery_id: int) -> Delivery | None:
    delivery = Delivery.objects.get(pk=delivery_id)
    return delivery if delivery.status in ("succeeded", "failed") else None


def test_a_label_change_makes_one_signed_delivery_that_verifies(
    transactional_db, celery_worker_process
):
    verify = documented_verify()
    item = ItemFactory(campaign=CampaignFactory(slug="signed"))
    with Receiver() as receiver:
        hook = webhook_create(
            url=receiver.url, events=["item.labelled"], owner=UserFactory(roles=["admin"])
        )
        final_label_set(item=item, value=Decimal(6), source="adjudication", policy="by hand",
                        grade_ids=[])  # fmt: skip
        (delivery,) = Delivery.objects.filter(webhook=hook)
        done = wait_for(lambda: finished(delivery.pk), timeout=30)
        time.sleep(0.5)  # a second message would have come by now
    assert done.status == "succeeded" and done.attempts == 1, done.error
    (taken,) = receiver.taken
    assert verify(hook.secret, taken.headers, taken.body)
    assert taken.headers["webhook-id"] == done.message_id
    body = json.loads(taken.body)
    assert body["type"] == "item.labelled" and body["data"]["item"] == item.pk
    assert body["data"]["label"]["value"] == "6" and body["data"]["campaign"] == "signed"
    assert [(t.number, t.status_code) for t in done.tries.all()] == [(1, 200)]


def test_a_500_then_a_200_is_retried_and_delivered_on_the_second_try(
    transactional_db, celery_worker_process
):
    verify = documented_verify()
    item = ItemFactory()
    with Receiver() as receiver:
        receiver.replies(500)
        hook = webhook_create(
            url=receiver.url, events=["item.labelled"], owner=UserFactory(roles=["admin"])
        )
        final_label_set(item=item, value=Decimal(2), source="imported", policy="import",
                        grade_ids=[])  # fmt: skip
        delivery = Delivery.objects.get(webhook=hook)
        done = wait_for(lambda: finished(delivery.pk), timeout=30)
    assert done.status == "succeeded" and done.attempts == 2, done.error
    tries = list(done.tries.all())
    assert [(t.number, t.status_code) for t in tries] == [(1, 500), (2, 200)]
    assert tries[0].response_excerpt == "answered 500"
    assert len(receiver.taken) == 2
    first, second = receiver.taken
    assert first.body == second.body and first.headers["webhook-id"] == second.headers["webhook-id"]
    assert all(verify(hook.secret, t.headers, t.body) for t in receiver.taken)


def test_a_receiver_that_is_down_fails_with_its_error_and_grading_goes_on(
    transactional_db, celery_worker_process, api_client_for
):
    hook = webhook_create(
        url=down_url(), events=["case.opened"], owner=UserFactory(roles=["admin"])
    )
    campaign = CampaignFactory()
    item = ItemFactory(campaign=campaign, required_judgements=2)
    a, b = expert_in(campaign), expert_in(campaign)
    api_a, api_b = api_client_for(a), api_client_for(b)
    for api in (api_a, api_b):
        api.post(f"/api/v1/campaigns/{campaign.slug}/next/")
    first = api_a.post(f"/api/v1/items/{item.pk}/submit/", {"score": 7}, format="json")
    assert first.status_code == 200, first.json()
    started = time.monotonic()
    second = api_b.post(f"/api/v1/items/{item.pk}/submit/", {"score": 0}, format="json")
    took = time.monotonic() - started
    assert second.status_code == 200, second.json()
    # nothing is sent in the request: the judgement is answered well within one try's timeout
    assert took < 2.0, f"the judgement took {took:.2f} s"
    assert Grade.objects.filter(item=item, status="submitted").count() == 2
    case = AdjudicationCase.objects.get(item=item)
    delivery = Delivery.objects.get(webhook=hook)
    assert json.loads(delivery.body)["data"]["case"] == case.pk
    done = wait_for(lambda: finished(delivery.pk), timeout=60)
    assert done.status == "failed" and done.attempts == 4
    assert "could not connect" in done.error and "given up after 4 tries" in done.error
    tries = list(done.tries.all())
    assert [t.number for t in tries] == [1, 2, 3, 4]
    assert all(t.status_code is None and "could not connect" in t.error for t in tries)


def test_a_replay_sends_the_message_again(
    transactional_db, celery_worker_process, api_client_for, admin_user
):
    item = ItemFactory()
    with Receiver() as receiver:
        receiver.replies(400)
        hook = webhook_create(
            url=receiver.url, events=["item.labelled"], owner=UserFactory(roles=["admin"])
        )
        final_label_set(item=item, value=Decimal(3), source="imported", policy="import",
                        grade_ids=[])  # fmt: skip
        delivery = Delivery.objects.get(webhook=hook)
        assert wait_for(lambda: finished(delivery.pk), timeout=30).status == "failed"
        answer = api_client_for(admin_user).post(
            f"/api/v1/webhooks/deliveries/{delivery.pk}/replay/"
        )
        assert answer.status_code == 202, answer.json()
        replay = wait_for(lambda: finished(answer.json()["id"]), timeout=30)
    assert replay.status == "succeeded" and replay.replay_of_id == delivery.pk
    assert [t.headers["webhook-id"] for t in receiver.taken] == [delivery.message_id] * 2
    assert receiver.taken[0].body == receiver.taken[1].body


def test_a_slow_receiver_times_out_without_holding_the_judgement_and_the_next_try_lands(
    transactional_db, celery_worker_process, api_client_for
):
    campaign = CampaignFactory()
    item = ItemFactory(campaign=campaign, required_judgements=2)
    a, b = expert_in(campaign), expert_in(campaign)
    with Receiver() as receiver:
        receiver.slow(1, 4.0)  # beyond the worker's 2 s timeout
        hook = webhook_create(
            url=receiver.url, events=["case.opened"], owner=UserFactory(roles=["admin"])
        )
        for expert, score in ((a, 1), (b, 6)):
            api = api_client_for(expert)
            api.post(f"/api/v1/campaigns/{campaign.slug}/next/")
            started = time.monotonic()
            answer = api.post(f"/api/v1/items/{item.pk}/submit/", {"score": score}, format="json")
            assert answer.status_code == 200 and time.monotonic() - started < 2.0
        delivery = Delivery.objects.get(webhook=hook)
        done = wait_for(lambda: finished(delivery.pk), timeout=60)
    assert done.status == "succeeded" and done.attempts == 2, done.error
    first, second = done.tries.all()
    assert first.status_code is None and first.error.startswith("timed out after 2 s")
    assert first.duration_ms < 3500  # the try gave up at its timeout, not at the receiver's pace
    assert second.status_code == 200
