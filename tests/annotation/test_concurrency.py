"""Assignment under concurrency on PostgreSQL: 32 threads, each on its own connection, and a
row lock held by another connection."""

import threading
from collections import Counter
from datetime import timedelta

import psycopg
import pytest
from django.conf import settings
from django.db import connection, connections
from django.utils import timezone

from annotation import services
from annotation.models import Assignment, Grade, Item
from tests.annotation.factories import CampaignFactory, ItemFactory, expert_in

pytestmark = [pytest.mark.django_db(transaction=True)]

THREADS = 32


def grade_data(score="3"):
    return services.GradeInput.from_data({"score": score})


def conninfo() -> str:
    db = settings.DATABASES["default"]
    return (
        f"host={db['HOST'] or '127.0.0.1'} port={db['PORT'] or 5432} "
        f"user={db['USER']} dbname={db['NAME']}"
    )


def run_threads(target, count=THREADS):
    errors: list[BaseException] = []

    def wrapped(index):
        try:
            target(index)
        except BaseException as exc:  # noqa: BLE001 (reported by the test below)
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=wrapped, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert not errors, errors


def test_32_threads_hammering_next_and_submit_never_overfill():
    campaign = CampaignFactory()
    items = [
        ItemFactory(campaign=campaign, required_judgements=1 + (n % 3 == 0)) for n in range(48)
    ]
    experts = [expert_in(campaign) for _ in range(THREADS)]
    pids: list[int] = []
    barrier = threading.Barrier(THREADS)

    def work(index):
        expert = experts[index]
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            pids.append(cursor.fetchone()[0])
        barrier.wait(timeout=60)
        while True:
            assignment = services.assignment_next(campaign=campaign, expert=expert)
            if assignment is None:
                return
            services.grade_submit(item=assignment.item, expert=expert, data=grade_data())

    run_threads(work)
    assert len(set(pids)) == THREADS
    submitted = Counter(
        Grade.objects.filter(item__campaign=campaign, status="submitted").values_list(
            "item_id", flat=True
        )
    )
    for item in items:
        assert submitted[item.pk] == item.required_judgements, item.pk
    pairs = Grade.objects.filter(item__campaign=campaign).values_list("item_id", "expert_id")
    assert len(pairs) == len(set(pairs))
    assert not Assignment.objects.filter(item__campaign=campaign, status="active").exists()


def test_next_skips_an_item_locked_by_another_connection_without_waiting():
    campaign = CampaignFactory()
    first = ItemFactory(campaign=campaign)
    second = ItemFactory(campaign=campaign)
    expert = expert_in(campaign)
    with psycopg.connect(conninfo(), autocommit=False) as other:
        other.execute("SELECT id FROM annotation_item WHERE id = %s FOR UPDATE", [first.pk])
        with connection.cursor() as cursor:
            # If "next" waited on the lock, this would raise instead of returning.
            cursor.execute("SET lock_timeout = '200ms'")
        try:
            got = services.assignment_next(campaign=campaign, expert=expert)
        finally:
            with connection.cursor() as cursor:
                cursor.execute("SET lock_timeout = 0")
        other.rollback()
    assert got.item_id == second.pk


def test_next_waits_on_the_last_open_item_locked_by_another_connection():
    # another expert's lease or submission holds the only item left: "next" waits for it rather
    # than telling this expert that no work is left
    campaign = CampaignFactory()
    only = ItemFactory(campaign=campaign)
    expert = expert_in(campaign)
    got: list = []
    with psycopg.connect(conninfo(), autocommit=False) as other:
        other.execute("SELECT id FROM annotation_item WHERE id = %s FOR UPDATE", [only.pk])
        waiter = threading.Thread(
            target=lambda: (
                got.append(services.assignment_next(campaign=campaign, expert=expert)),
                connections.close_all(),
            )
        )
        waiter.start()
        waiter.join(timeout=0.5)
        assert waiter.is_alive()  # waiting on the lock, not answering "nothing left"
        other.rollback()
    waiter.join(timeout=30)
    assert got[0] is not None and got[0].item_id == only.pk


def test_late_submits_after_expired_leases_race_without_overfilling():
    campaign = CampaignFactory()
    items = [ItemFactory(campaign=campaign) for _ in range(8)]
    late = [expert_in(campaign) for _ in items]
    fresh = [expert_in(campaign) for _ in items]
    for item, expert in zip(items, late, strict=True):
        services.assignment_create_manual(item=item, expert=expert, assigned_by=None)
    Assignment.objects.filter(item__campaign=campaign).update(
        leased_until=timezone.now() - timedelta(minutes=1)
    )
    for item, expert in zip(items, fresh, strict=True):
        assert services.assignment_create_manual(item=item, expert=expert, assigned_by=None)
    pairs = [(item, expert) for item, expert in zip(items, late, strict=True)]
    pairs += [(item, expert) for item, expert in zip(items, fresh, strict=True)]
    barrier = threading.Barrier(len(pairs))
    outcomes: list[str] = []

    def submit(index):
        item, expert = pairs[index]
        barrier.wait(timeout=60)
        try:
            services.grade_submit(item=item, expert=expert, data=grade_data())
            outcomes.append("ok")
        except services.GradeError:
            outcomes.append("refused")

    run_threads(submit, count=len(pairs))
    for item in items:
        assert Grade.objects.filter(item=item, status="submitted").count() == 1
    assert outcomes.count("ok") == len(items)
    assert Item.objects.filter(campaign=campaign).count() == len(items)


def test_two_identical_submissions_at_once_both_get_the_submitted_grade():
    campaign = CampaignFactory()
    item = ItemFactory(campaign=campaign)
    expert = expert_in(campaign)
    services.assignment_next(campaign=campaign, expert=expert)
    barrier = threading.Barrier(2)
    got: list[int] = []

    def submit(index):
        barrier.wait(timeout=60)
        grade = services.grade_submit(
            item=item, expert=expert, data=grade_data(), submit_key="same-key"
        )
        got.append(grade.pk)

    run_threads(submit, count=2)
    assert len(got) == 2 and got[0] == got[1]
    item.refresh_from_db()
    assert item.submitted_count == 1


def _synchronous_commit() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SHOW synchronous_commit")
        return cursor.fetchone()[0]


def test_a_lease_commits_without_waiting_for_the_wal_a_submission_waits():
    """Leases are re-creatable: the transaction that writes one skips the WAL flush (set by the
    candidate query itself). A submission in the next transaction is durable again."""
    from django.db import transaction

    campaign = CampaignFactory()
    ItemFactory(campaign=campaign)
    expert = expert_in(campaign)
    with connection.cursor() as cursor:  # the server's default (the test database's is off)
        cursor.execute("SET synchronous_commit TO on")
    with transaction.atomic():
        assignment = services.assignment_next(campaign=campaign, expert=expert)
        assert assignment is not None
        assert _synchronous_commit() == "off"
    with transaction.atomic():
        services.grade_submit(item=assignment.item, expert=expert, data=grade_data())
        assert _synchronous_commit() == "on"
    assert Grade.objects.get(item=assignment.item).status == "submitted"
