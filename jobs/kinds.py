"""Every kind of background job, in one list filled at start-up (each app registers its kinds in
its AppConfig.ready): where its row is, how its status reads, which Celery task runs it (sent
with the row's id) and how a failure is recorded on the row.

A kind's service functions stay idempotent: a job sent twice, or run again after its worker died,
never duplicates rows (jobs.services.job_run skips a job that is finished or alive elsewhere).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from django.apps import apps
from django.db import models

from jobs.models import JobStatus

RUNNING = JobStatus.RUNNING


@dataclass(frozen=True)
class JobKind:
    name: str
    model_label: str
    task: str
    waiting: tuple[str, ...]
    fail: Callable[[int, str], None]
    status_field: str = "status"
    reset: Callable[[int], None] | None = None

    @property
    def model(self) -> type[models.Model]:
        return apps.get_model(self.model_label)


KINDS: dict[str, JobKind] = {}


def job_kind_register(kind: JobKind) -> None:
    """Adds a kind to KINDS: each app registers its own in its AppConfig.ready, so that jobs/
    knows no app above it (an app points down at jobs, never the other way)."""
    KINDS[kind.name] = kind
