from django.apps import AppConfig


# the service is imported when a job fails, not at every start-up
def _evaluation_fail(pk: int, reason: str) -> None:
    from graders.services.evaluations import evaluation_fail

    evaluation_fail(evaluation_id=pk, reason=reason)


def _grid_fail(pk: int, reason: str) -> None:
    from graders.services.grids import grid_fail

    grid_fail(grid_id=pk, reason=reason)


def _pick_run_fail(pk: int, reason: str) -> None:
    from graders.services.pick_runs import pick_run_fail

    pick_run_fail(run_id=pk, reason=reason)


class GradersConfig(AppConfig):
    name = "graders"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from graders import opinions
        from jobs.kinds import JobKind, job_kind_register
        from jobs.models import JobStatus

        job_kind_register(
            JobKind(
                "grader_evaluation",
                "graders.GraderEvaluation",
                "graders.evaluation_run",
                (JobStatus.PENDING,),
                fail=_evaluation_fail,
            )
        )
        job_kind_register(
            JobKind(
                "grader_grid",
                "graders.GraderGrid",
                "graders.grid_run",
                (JobStatus.PENDING,),
                fail=_grid_fail,
            )
        )
        job_kind_register(
            JobKind(
                "grader_picks",
                "graders.PairwisePickRun",
                "graders.pick_run",
                (JobStatus.PENDING,),
                fail=_pick_run_fail,
            )
        )
        opinions.connect()
