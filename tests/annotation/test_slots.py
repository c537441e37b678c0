"""One rule of judgement slots (annotation/slots.py): the SQL fragments that the hand-written
statements take and the ORM twins that the portable paths take agree, on both databases."""

from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from annotation.models import Assignment, AssignmentStatus, Item
from annotation.slots import (
    assignment_open,
    assignment_open_sql,
    item_open,
    item_open_sql,
    lease_is_live,
    lease_live,
    lease_live_sql,
    slot_taken,
    slot_taken_sql,
)
from tests.annotation.factories import CampaignFactory, ItemFactory, expert_in

pytestmark = pytest.mark.django_db


def ids_by_sql(sql: str, now) -> set[int]:
    with connection.cursor() as cursor:
        cursor.execute(sql, {"now": connection.ops.adapt_datetimefield_value(now)})
        return {row[0] for row in cursor.fetchall()}


def test_the_taken_slot_fragment_and_its_orm_twin_agree():
    now = timezone.now()
    campaign = CampaignFactory()
    item = ItemFactory(campaign=campaign)
    states = [
        (AssignmentStatus.DONE, now - timedelta(hours=1)),  # taken: submitted, lease long over
        (AssignmentStatus.ACTIVE, now + timedelta(minutes=5)),  # taken: leased
        (AssignmentStatus.ACTIVE, now - timedelta(seconds=1)),  # free: lease expired
        (AssignmentStatus.RELEASED, now + timedelta(minutes=5)),  # free: given back
    ]
    made = [
        Assignment.objects.create(
            item=item, expert=expert_in(campaign), status=status, leased_until=until
        ).pk
        for status, until in states
    ]
    by_orm = set(Assignment.objects.filter(slot_taken(now)).values_list("pk", flat=True))
    by_sql = ids_by_sql(
        f"SELECT a.id FROM annotation_assignment a WHERE {slot_taken_sql('a')}", now
    )
    assert by_orm == by_sql == set(made[:2])


def test_the_live_lease_forms_agree():
    now = timezone.now()
    campaign = CampaignFactory()
    item = ItemFactory(campaign=campaign)
    made = [
        Assignment.objects.create(
            item=item, expert=expert_in(campaign), status=status, leased_until=until
        )
        for status, until in [
            (AssignmentStatus.ACTIVE, now + timedelta(minutes=5)),  # live
            (AssignmentStatus.ACTIVE, now - timedelta(seconds=1)),  # expired
            (AssignmentStatus.DONE, now + timedelta(minutes=5)),  # submitted: no lease
            (AssignmentStatus.RELEASED, now + timedelta(minutes=5)),  # given back
        ]
    ]
    by_orm = set(Assignment.objects.filter(lease_live(now)).values_list("pk", flat=True))
    by_relation = set(
        Item.objects.filter(lease_live(now, prefix="assignments__")).values_list("pk", flat=True)
    )
    by_sql = ids_by_sql(
        f"SELECT a.id FROM annotation_assignment a WHERE {lease_live_sql('a')}", now
    )
    by_instance = {a.pk for a in made if lease_is_live(a, now)}
    assert by_orm == by_sql == by_instance == {made[0].pk}
    assert by_relation == {item.pk}


def test_the_open_item_fragment_and_its_orm_twin_agree():
    campaign = CampaignFactory()
    open_item = ItemFactory(campaign=campaign)
    closed = [
        ItemFactory(campaign=campaign, **{field: value})
        for field, value in [
            ("needs_work", False),
            ("is_final", True),
            ("is_gold", True),
            ("route_held", True),
        ]
    ]
    by_orm = set(Item.objects.filter(item_open()).values_list("pk", flat=True))
    by_sql = ids_by_sql(f"SELECT i.id FROM annotation_item i WHERE {item_open_sql('i')}", None)
    assert by_orm == by_sql == {open_item.pk}
    assert not {item.pk for item in closed} & by_sql


def test_the_open_assignment_fragment_and_its_orm_twin_agree():
    campaign = CampaignFactory()
    expert = expert_in(campaign)
    later = timezone.now() + timedelta(minutes=5)
    rows = [
        (ItemFactory(campaign=campaign), AssignmentStatus.ACTIVE),  # open
        (ItemFactory(campaign=campaign, is_final=True, is_gold=True), AssignmentStatus.ACTIVE),
        (ItemFactory(campaign=campaign, is_final=True), AssignmentStatus.ACTIVE),  # final
        (ItemFactory(campaign=campaign), AssignmentStatus.RELEASED),
        (ItemFactory(campaign=campaign), AssignmentStatus.DONE),
    ]
    made = [
        Assignment.objects.create(item=item, expert=expert, status=status, leased_until=later).pk
        for item, status in rows
    ]
    by_orm = set(Assignment.objects.filter(assignment_open()).values_list("pk", flat=True))
    by_sql = ids_by_sql(
        "SELECT a.id FROM annotation_assignment a JOIN annotation_item i ON i.id = a.item_id "
        f"WHERE {assignment_open_sql('a', 'i')}",
        None,
    )
    assert by_orm == by_sql == set(made[:2])
