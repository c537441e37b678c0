"""Pair leases under concurrency on PostgreSQL: experts in threads (each on its own connection)
lease and judge at once; no pair gets more live leases or judgements than it requires."""

import threading

import psycopg
import pytest
from django.db import connections
from django.db.models import Count, Q

from annotation.models import JudgementStatus, PairItem, PairStatus
from annotation.services.pairs import pair_judgement_submit, pair_next
from tests.annotation.pair_factories import pairwise_campaign
from tests.annotation.test_concurrency import conninfo, run_threads

pytestmark = [pytest.mark.django_db(transaction=True)]

EXPERTS = 8


def test_experts_at_once_never_overfill_a_pair():
    campaign, _, experts = pairwise_campaign(
        generators=[f"g{k}" for k in range(5)], experts=EXPERTS
    )  # 10 pairs, 20 slots for 8 experts

    def work(index):
        expert = experts[index]
        while (judgement := pair_next(campaign=campaign, expert=expert)) is not None:
            pair_judgement_submit(judgement_id=judgement.pk, expert=expert, shown="tie")

    run_threads(work, count=EXPERTS)
    pairs = PairItem.objects.filter(campaign=campaign).annotate(
        done=Count("judgements", filter=Q(judgements__status=JudgementStatus.SUBMITTED))
    )
    assert [p.done for p in pairs] == [2] * 10
    assert all(p.status == PairStatus.FINAL and p.submitted_count == 2 for p in pairs)


def test_next_waits_on_the_last_open_pair_locked_by_another_connection():
    # the race the test above once lost: the only pair left locked by another expert's
    # submission made "next" answer "nothing left" while the pair still had a free slot
    campaign, _, (expert, _other) = pairwise_campaign(generators=["g0", "g1"])
    (pair,) = PairItem.objects.filter(campaign=campaign)
    got: list = []
    with psycopg.connect(conninfo(), autocommit=False) as other:
        other.execute(
            f"SELECT id FROM {PairItem._meta.db_table} WHERE id = %s FOR UPDATE", [pair.pk]
        )
        waiter = threading.Thread(
            target=lambda: (
                got.append(pair_next(campaign=campaign, expert=expert)),
                connections.close_all(),
            )
        )
        waiter.start()
        waiter.join(timeout=0.5)
        assert waiter.is_alive()
        other.rollback()
    waiter.join(timeout=30)
    assert got[0] is not None and got[0].pair_id == pair.pk
