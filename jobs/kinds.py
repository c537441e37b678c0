"""Every kind of background job, in one list: where its row is, how its status reads, which
Celery task runs it (sent with the row's id) and how a failure is recorded on the row.

A kind's service functions stay idempotent: a job sent twice, or run again after its worker died,
never duplicates rows (jobs.services.job_run skips a job that is finished or alive elsewhere).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from django.apps import apps
from django.db import models

RUNNING = "running"


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


def _fail_import(pk: int, reason: str) -> None:
    from problems.services import import_job_fail

    import_job_fail(job_id=pk, message=reason)


def _fail_generation(pk: int, reason: str) -> None:
    from rubrics.generation import generation_task_fail

    generation_task_fail(task_id=pk, reason=reason)


def _fail_verifier_run(pk: int, reason: str) -> None:
    from adjudication.verifier_runs import verifier_run_fail

    verifier_run_fail(run_id=pk, reason=reason)


def _fail_labelling(pk: int, reason: str) -> None:
    from adjudication.labelling import labelling_outcome_fail

    labelling_outcome_fail(outcome_id=pk, reason=reason)


def _fail_evaluation(pk: int, reason: str) -> None:
    from exports.services.evaluations import evaluation_fail

    evaluation_fail(evaluation_id=pk, reason=reason)


def _fail_export(pk: int, reason: str) -> None:
    from exports.services.datasets import export_fail

    export_fail(job_id=pk, reason=reason)


def _reset_export(pk: int) -> None:
    """A re-run starts from nothing: whatever the dead run stored goes (each run writes in a
    scratch folder of its own and stores its files only when they are complete)."""
    from config.storage import stored_folder_delete

    stored_folder_delete(f"exports/{pk}")


KINDS: dict[str, JobKind] = {
    kind.name: kind
    for kind in (
        JobKind(
            "import", "problems.ImportJob", "problems.tasks.import_run", ("pending",), _fail_import
        ),
        JobKind(
            "scheme_generation",
            "rubrics.GenerationTask",
            "rubrics.tasks.generate_scheme",
            ("pending", "retrying"),
            _fail_generation,
        ),
        JobKind(
            "verifier_run",
            "adjudication.VerifierRun",
            "adjudication.tasks.verifier_run_job",
            ("pending",),
            _fail_verifier_run,
        ),
        JobKind(
            "labelling",
            "adjudication.LabellingOutcome",
            "adjudication.tasks.labelling_outcome_job",
            ("pending",),
            _fail_labelling,
            status_field="outcome",
        ),
        JobKind(
            "grader_evaluation",
            "exports.GraderEvaluation",
            "exports.evaluation_run",
            ("pending",),
            _fail_evaluation,
        ),
        JobKind(
            "export",
            "exports.ExportJob",
            "exports.export_run",
            ("pending",),
            _fail_export,
            reset=_reset_export,
        ),
    )
}
