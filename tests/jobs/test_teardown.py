"""A test worker's database session still at work when a test ends is ended before the test's
teardown (tests/conftest.py, pytest_runtest_teardown): a transactional test's flush TRUNCATEs every
table, and a worker's open transaction made it wait or deadlock (PostgreSQL then gave up the
flush, an error at teardown of a test that had passed)."""

import psycopg
import pytest
from django.db import connection, transaction

from tests.conftest import worker_database_url, worker_sessions_end
from tests.problems.page_factories import ProblemFactory

pytestmark = [pytest.mark.django_db(transaction=True)]


def test_a_workers_open_transaction_is_ended_and_its_locks_released():
    ProblemFactory()
    worker = psycopg.connect(worker_database_url().replace("postgres://", "postgresql://"))
    idle = psycopg.connect(worker_database_url().replace("postgres://", "postgresql://"))
    try:
        worker.execute("SELECT id FROM problems_problem FOR UPDATE").fetchall()  # a job's lock
        assert worker_sessions_end() == 1  # the idle session is left alone
        with pytest.raises(psycopg.OperationalError):
            worker.execute("SELECT 1")
        idle.execute("SELECT 1")
        with transaction.atomic(), connection.cursor() as cursor:  # what the flush needs, at once
            cursor.execute("LOCK TABLE problems_problem IN ACCESS EXCLUSIVE MODE NOWAIT")
    finally:
        worker.close()
        idle.close()
