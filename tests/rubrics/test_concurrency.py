"""Versions and approval under concurrent writers, on the real PostgreSQL."""

import threading

import pytest
from django.db import connection

from rubrics.models import MarkingScheme, SchemeMethod, SchemeStatus
from rubrics.services import scheme_approve, scheme_version_create
from tests.problems.page_factories import ProblemFactory
from tests.rubrics.factories import VALID_SCHEME

pytestmark = [pytest.mark.django_db(transaction=True)]


def run_together(target, count: int) -> list[BaseException]:
    barrier = threading.Barrier(count)
    errors: list[BaseException] = []

    def worker(index: int) -> None:
        try:
            barrier.wait()
            target(index)
        except BaseException as exc:  # noqa: BLE001 (reported by the test)
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return errors


def test_concurrent_versions_get_distinct_numbers():
    problem = ProblemFactory()
    errors = run_together(
        lambda i: scheme_version_create(
            problem=problem, text=f"{VALID_SCHEME}\n{i}", method=SchemeMethod.MANUAL
        ),
        6,
    )
    assert errors == []
    versions = sorted(
        MarkingScheme.objects.filter(problem=problem).values_list("version", flat=True)
    )
    assert versions == [1, 2, 3, 4, 5, 6]


def test_concurrent_approvals_leave_one_approved(admin_user):
    problem = ProblemFactory()
    schemes = [
        scheme_version_create(problem=problem, text=VALID_SCHEME, method=SchemeMethod.MANUAL)
        for _ in range(4)
    ]
    errors = run_together(lambda i: scheme_approve(scheme=schemes[i], user=admin_user), 4)
    assert errors == []
    assert MarkingScheme.objects.filter(problem=problem, status=SchemeStatus.APPROVED).count() == 1
