"""core.threads.read_ahead: a reader of batches run `depth` steps ahead in a thread, on the
caller's connection."""

import time

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from core.threads import read_ahead
from problems.models import Problem

pytestmark = pytest.mark.django_db


def batches(read: list[int], count: int):
    for step in range(count):
        read.append(step)
        yield list(
            Problem.objects.filter(external_id__startswith="RA-").values_list("pk", flat=True)
        )


def test_the_steps_see_the_callers_transaction_and_are_counted():
    made = Problem.objects.create(external_id="RA-1", statement="Prove it.")
    read: list[int] = []
    with CaptureQueriesContext(connection) as captured:
        got = list(read_ahead(batches(read, 3)))
    assert got == [[made.pk]] * 3  # the uncommitted row, seen from the reading thread
    assert len(captured.captured_queries) == 3


@pytest.mark.parametrize("pause", [0.0, 0.05])
@pytest.mark.parametrize("depth", [1, 3])
def test_exactly_depth_steps_ahead_whatever_the_pace(pause, depth):
    """A caller that takes two steps and stops has had 2 + depth read, slow or fast."""
    read: list[int] = []
    steps = read_ahead(batches(read, 10), depth=depth)
    for taken, _ in enumerate(steps, start=1):
        time.sleep(pause)
        if taken == 2:
            break
    steps.close()
    assert read == list(range(2 + depth))


def test_a_failing_step_fails_the_caller():
    def failing():
        yield 1
        raise ValueError("step 2 failed")

    steps = read_ahead(failing())
    assert next(steps) == 1
    with pytest.raises(ValueError, match="step 2 failed"):
        next(steps)
