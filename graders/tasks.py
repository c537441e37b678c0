"""Background jobs of the graders app: each takes an id and records its state on its row
(jobs.services.job_run: skipped when finished or alive elsewhere, a heartbeat while it runs)."""

from celery import shared_task

from graders.services.evaluations import evaluation_fail, evaluation_run
from graders.services.grids import grid_fail, grid_run
from graders.services.pick_runs import pick_run, pick_run_fail
from jobs.services import job_run


@shared_task(name="graders.evaluation_run", acks_late=True)
def evaluation_run_task(evaluation_id: int) -> None:
    def body() -> None:
        try:
            evaluation_run(evaluation_id=evaluation_id)
        except Exception as exc:
            evaluation_fail(evaluation_id=evaluation_id, reason=f"unexpected error: {exc}")
            raise

    job_run("grader_evaluation", evaluation_id, body)


@shared_task(name="graders.grid_run", acks_late=True)
def grid_run_task(grid_id: int) -> None:
    def body() -> None:
        try:
            grid_run(grid_id=grid_id)
        except Exception as exc:
            grid_fail(grid_id=grid_id, reason=f"unexpected error: {exc}")
            raise

    job_run("grader_grid", grid_id, body)


@shared_task(name="graders.pick_run", acks_late=True)
def pick_run_task(run_id: int) -> None:
    def body() -> None:
        try:
            pick_run(run_id=run_id)
        except Exception as exc:
            pick_run_fail(run_id=run_id, reason=f"unexpected error: {exc}")
            raise

    job_run("grader_picks", run_id, body)
